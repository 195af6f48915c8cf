package metafile

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/magiconair/properties"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/vfs"
)

// MetaPropertiesFile is the file's name in every log directory.
const MetaPropertiesFile = "meta.properties"

// The meta.properties versions: 0 was written by ZooKeeper-mode brokers
// (broker.id), 1 by KRaft nodes (node.id).
const (
	MetaPropertiesV0 = 0
	MetaPropertiesV1 = 1
)

// MetaProperties is the content of meta.properties.
type MetaProperties struct {
	Version int
	// ClusterID is required in version 1; "" means absent (version 0 only).
	ClusterID string
	// NodeID is node.id (version 1) or broker.id (version 0); -1 means
	// absent (version 0 only).
	NodeID int32
	// DirectoryID identifies the log directory (KIP-858); zero means absent.
	DirectoryID kafka.UUID
}

// FormatMetaProperties renders m as a Java properties file, Kafka's format.
// Values are checked to need no escaping, so any Java or Go properties
// reader reads back exactly these strings.
func FormatMetaProperties(m MetaProperties) ([]byte, error) {
	if m.Version != MetaPropertiesV0 && m.Version != MetaPropertiesV1 {
		return nil, fmt.Errorf("meta.properties version %d: want 0 or 1", m.Version)
	}
	if m.Version == MetaPropertiesV1 && (m.ClusterID == "" || m.NodeID < 0) {
		return nil, fmt.Errorf("meta.properties version 1 needs cluster.id and node.id (have %q, %d)", m.ClusterID, m.NodeID)
	}
	if !plainValue(m.ClusterID) {
		return nil, fmt.Errorf("meta.properties cluster.id %q: only printable ASCII without spaces or backslashes", m.ClusterID)
	}
	var b strings.Builder
	// Java's Properties.store starts with a comment line; Kafka's has the date.
	b.WriteString("#\n#Written by Sluice\n")
	fmt.Fprintf(&b, "version=%d\n", m.Version)
	if m.ClusterID != "" {
		fmt.Fprintf(&b, "cluster.id=%s\n", m.ClusterID)
	}
	if m.NodeID >= 0 {
		key := "node.id"
		if m.Version == MetaPropertiesV0 {
			key = "broker.id"
		}
		fmt.Fprintf(&b, "%s=%d\n", key, m.NodeID)
	}
	if !m.DirectoryID.IsZero() {
		fmt.Fprintf(&b, "directory.id=%s\n", m.DirectoryID)
	}
	return []byte(b.String()), nil
}

// plainValue reports whether s is written the same escaped or not.
func plainValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c > '~' || c == '\\' {
			return false
		}
	}
	return true
}

// WriteMetaProperties atomically writes meta.properties at path.
func WriteMetaProperties(fsys vfs.FS, path string, m MetaProperties) error {
	data, err := FormatMetaProperties(m)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := vfs.WriteFileAtomic(fsys, path, data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadMetaProperties reads meta.properties at path. A missing file is an
// error satisfying vfs.IsNotExist (an unformatted directory).
func ReadMetaProperties(fsys vfs.FS, path string) (MetaProperties, error) {
	data, err := readFile(fsys, path)
	if err != nil {
		return MetaProperties{}, err
	}
	return ParseMetaProperties(path, data)
}

// ParseMetaProperties decodes meta.properties content with Kafka's rules: a
// missing version means 0; version 1 requires cluster.id and node.id;
// directory.id, when present, must be a Uuid. Unknown keys are ignored.
// name is used only in errors.
func ParseMetaProperties(name string, data []byte) (MetaProperties, error) {
	// Java reads properties files as ISO-8859-1; ${} expansion is a Go
	// library extension Java does not have.
	loader := properties.Loader{Encoding: properties.ISO_8859_1, DisableExpansion: true}
	props, err := loader.LoadBytes(data)
	if err != nil {
		return MetaProperties{}, fmt.Errorf("%w %s: %v", ErrMalformed, name, err)
	}
	m := MetaProperties{NodeID: -1}
	if v, ok := props.Get("version"); ok {
		switch v {
		case "0":
			m.Version = MetaPropertiesV0
		case "1":
			m.Version = MetaPropertiesV1
		default:
			return MetaProperties{}, fmt.Errorf("%w %s: unknown version %q", ErrMalformed, name, v)
		}
	}
	idKey := "node.id"
	if m.Version == MetaPropertiesV0 {
		idKey = "broker.id"
	}
	if v, ok := props.Get(idKey); ok {
		id, err := strconv.ParseInt(v, 10, 32)
		if err != nil || id < 0 {
			return MetaProperties{}, fmt.Errorf("%w %s: bad %s %q", ErrMalformed, name, idKey, v)
		}
		m.NodeID = int32(id)
	}
	m.ClusterID, _ = props.Get("cluster.id")
	if v, ok := props.Get("directory.id"); ok {
		id, err := kafka.ParseUUID(v)
		if err != nil {
			return MetaProperties{}, fmt.Errorf("%w %s: bad directory.id: %v", ErrMalformed, name, err)
		}
		m.DirectoryID = id
	}
	if m.Version == MetaPropertiesV1 {
		if m.ClusterID == "" {
			return MetaProperties{}, fmt.Errorf("%w %s: cluster.id was not found", ErrMalformed, name)
		}
		if m.NodeID < 0 {
			return MetaProperties{}, fmt.Errorf("%w %s: node.id was not found", ErrMalformed, name)
		}
	}
	return m, nil
}

// readFile reads a whole file; its error names the path once (the file
// system's own errors name it already).
func readFile(fsys vfs.FS, path string) ([]byte, error) {
	data, err := vfs.ReadFile(fsys, path)
	var pathErr *fs.PathError
	if err != nil && !errors.As(err, &pathErr) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return data, err
}
