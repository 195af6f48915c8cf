// Package metafile reads and writes two small Kafka metadata files: a
// partition directory's partition.metadata (its topic id) and a log
// directory's meta.properties (cluster, node and directory ids). Both are
// byte-compatible with Kafka's; readers are strict and their errors name the
// file and wrap ErrMalformed.
package metafile

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/vfs"
)

// ErrMalformed is wrapped by every error about a metadata file's content.
var ErrMalformed = errors.New("malformed metadata file")

// PartitionMetadataFile is the file's name in a partition directory.
const PartitionMetadataFile = "partition.metadata"

// partitionMetadataVersion is the version Kafka writes.
const partitionMetadataVersion = 0

// FormatPartitionMetadata renders partition.metadata for topicID.
func FormatPartitionMetadata(topicID kafka.UUID) []byte {
	return fmt.Appendf(nil, "version: %d\ntopic_id: %s\n", partitionMetadataVersion, topicID)
}

// WritePartitionMetadata atomically writes partition.metadata at path. A
// zero topic id is refused: Kafka would refuse to read it back.
func WritePartitionMetadata(fsys vfs.FS, path string, topicID kafka.UUID) error {
	if topicID.IsZero() {
		return fmt.Errorf("write %s: zero topic id", path)
	}
	if err := vfs.WriteFileAtomic(fsys, path, FormatPartitionMetadata(topicID)); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadPartitionMetadata reads the topic id from partition.metadata at path.
// A missing file is an error satisfying vfs.IsNotExist.
func ReadPartitionMetadata(fsys vfs.FS, path string) (kafka.UUID, error) {
	data, err := readFile(fsys, path)
	if err != nil {
		return kafka.UUID{}, err
	}
	return ParsePartitionMetadata(path, data)
}

// ParsePartitionMetadata decodes partition.metadata content as Kafka does:
// "version: N" with N >= 0 (a newer version is accepted so a downgrade
// still reads it), then "topic_id: <uuid>" with a non-zero id. name is used
// only in errors.
func ParsePartitionMetadata(name string, data []byte) (kafka.UUID, error) {
	lines := strings.SplitN(string(data), "\n", 3)
	versionText, err := keyValueLine(name, lines, 0, "version")
	if err != nil {
		return kafka.UUID{}, err
	}
	version, err := strconv.Atoi(versionText)
	if err != nil || version < partitionMetadataVersion {
		return kafka.UUID{}, malformed(name, 1, fmt.Sprintf("bad version %q", versionText))
	}
	idText, err := keyValueLine(name, lines, 1, "topic_id")
	if err != nil {
		return kafka.UUID{}, err
	}
	id, err := kafka.ParseUUID(idText)
	if err != nil {
		return kafka.UUID{}, malformed(name, 2, err.Error())
	}
	if id.IsZero() {
		return kafka.UUID{}, malformed(name, 2, "zero topic id")
	}
	return id, nil
}

// keyValueLine returns the value of line i, which must read "key: value"
// (a colon, then at least one whitespace character, as Kafka splits it).
func keyValueLine(name string, lines []string, i int, key string) (string, error) {
	if i >= len(lines) {
		return "", malformed(name, i+1, fmt.Sprintf("missing %s line", key))
	}
	line := lines[i]
	k, rest, ok := strings.Cut(line, ":")
	value := strings.TrimLeft(rest, " \t\r\f\v")
	if !ok || k != key || len(value) == len(rest) {
		return "", malformed(name, i+1, fmt.Sprintf("want %q, found %q", key+": ...", line))
	}
	return value, nil
}

func malformed(name string, line int, msg string) error {
	return fmt.Errorf("%w %s: line %d: %s", ErrMalformed, name, line, msg)
}
