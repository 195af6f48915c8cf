// Package logdir prepares a node's log directories: it formats them
// (meta.properties, as kafka-storage format does), checks at start-up that
// they belong to one cluster and node, and locks them so two processes
// never run on one directory (Kafka's LogManager does both).
package logdir

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/sluice-io/sluice/internal/commitlog/metafile"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/vfs"
)

// ErrAlreadyFormatted is Format's error for a directory that already holds a
// meta.properties, unless told to ignore formatted directories.
var ErrAlreadyFormatted = errors.New("log directory is already formatted")

// Format writes meta.properties (version 1: cluster id, node id and a fresh
// directory id) into every directory, as kafka-storage format does. A
// formatted directory is an error wrapping ErrAlreadyFormatted unless
// ignoreFormatted, in which case it is left as it is.
func Format(fsys vfs.FS, dirs []string, clusterID string, nodeID int32, ignoreFormatted bool) error {
	if _, err := kafka.ParseUUID(clusterID); err != nil {
		return fmt.Errorf("cluster id %q is not a Kafka UUID (use `sluice storage random-uuid`): %w", clusterID, err)
	}
	for _, dir := range dirs {
		path := filepath.Join(dir, metafile.MetaPropertiesFile)
		_, err := metafile.ReadMetaProperties(fsys, path)
		switch {
		case err == nil && ignoreFormatted:
			continue
		case err == nil:
			return fmt.Errorf("%s: %w (use --ignore-formatted to skip it)", dir, ErrAlreadyFormatted)
		case !vfs.IsNotExist(err):
			return err
		}
		if err := writeMetaProperties(fsys, dir, clusterID, nodeID); err != nil {
			return err
		}
	}
	return nil
}

func writeMetaProperties(fsys vfs.FS, dir, clusterID string, nodeID int32) error {
	dirID, err := kafka.RandomUUID()
	if err != nil {
		return fmt.Errorf("draw a directory id: %w", err)
	}
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create log dir: %w", err) // names the dir
	}
	m := metafile.MetaProperties{Version: metafile.MetaPropertiesV1, ClusterID: clusterID, NodeID: nodeID, DirectoryID: dirID}
	if err := metafile.WriteMetaProperties(fsys, filepath.Join(dir, metafile.MetaPropertiesFile), m); err != nil {
		return fmt.Errorf("format %s: %w", dir, err)
	}
	return nil
}

// EnsureFormatted checks the directories' meta.properties at start-up and
// returns the cluster id they agree on and the directories it formatted.
// Directories of another cluster or node are refused. Unformatted directories are formatted with the cluster's
// id; when none is formatted, autoFormat (a single-voter combined node)
// formats them all with a new cluster id, otherwise start-up stops and asks
// for `sluice storage format`, as Kafka does.
func EnsureFormatted(fsys vfs.FS, dirs []string, nodeID int32, autoFormat bool) (clusterID string, formatted []string, err error) {
	var unformatted []string
	for _, dir := range dirs {
		path := filepath.Join(dir, metafile.MetaPropertiesFile)
		m, err := metafile.ReadMetaProperties(fsys, path)
		if vfs.IsNotExist(err) {
			unformatted = append(unformatted, dir)
			continue
		}
		if err != nil {
			return "", nil, err // it names the file
		}
		if m.Version != metafile.MetaPropertiesV1 {
			return "", nil, fmt.Errorf("%s: version %d is not a KRaft meta.properties", path, m.Version)
		}
		if clusterID != "" && m.ClusterID != clusterID {
			return "", nil, fmt.Errorf("%s: cluster id %s does not match %s of the other log dirs", path, m.ClusterID, clusterID)
		}
		if m.NodeID != nodeID {
			return "", nil, fmt.Errorf("%s: node id %d does not match node.id %d", path, m.NodeID, nodeID)
		}
		clusterID = m.ClusterID
	}
	if clusterID == "" {
		if !autoFormat {
			return "", nil, fmt.Errorf("log dirs %v are not formatted: run `sluice storage format --cluster-id ID --config FILE`", dirs)
		}
		id, err := kafka.RandomUUID()
		if err != nil {
			return "", nil, fmt.Errorf("draw a cluster id: %w", err)
		}
		clusterID = id.String()
	}
	for _, dir := range unformatted {
		if err := writeMetaProperties(fsys, dir, clusterID, nodeID); err != nil {
			return "", nil, err
		}
	}
	return clusterID, unformatted, nil
}

// AllDirs is log.dirs plus the metadata log dir when it is separate.
func AllDirs(logDirs []string, metadataDir string) []string {
	out := slices.Clone(logDirs)
	if !slices.Contains(out, metadataDir) {
		out = append(out, metadataDir)
	}
	return out
}
