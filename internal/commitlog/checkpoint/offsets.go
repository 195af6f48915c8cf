package checkpoint

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/vfs"
)

// The per-log-dir offset checkpoint file names Kafka uses.
const (
	RecoveryPointFile  = "recovery-point-offset-checkpoint"
	ReplicationFile    = "replication-offset-checkpoint"
	LogStartOffsetFile = "log-start-offset-checkpoint"
	CleanerOffsetFile  = "cleaner-offset-checkpoint"
)

// Write replaces the checkpoint file at path with offsets, atomically: after
// a crash the file holds either the old or the new set. Lines are sorted by
// topic and partition so equal maps give equal files.
func Write(fsys vfs.FS, path string, offsets map[kafka.TopicPartition]int64) error {
	if err := vfs.WriteFileAtomic(fsys, path, Format(offsets)); err != nil {
		return fmt.Errorf("write checkpoint %s: %w", path, err)
	}
	return nil
}

// Read reads the checkpoint file at path. A missing file is an error
// satisfying vfs.IsNotExist (Kafka treats it as empty); bad content is an
// error wrapping ErrMalformed.
func Read(fsys vfs.FS, path string) (map[kafka.TopicPartition]int64, error) {
	data, err := vfs.ReadFile(fsys, path)
	if err != nil {
		return nil, fmt.Errorf("read checkpoint %s: %w", path, err)
	}
	return Parse(path, data)
}

// Format renders offsets as a checkpoint file's content.
func Format(offsets map[kafka.TopicPartition]int64) []byte {
	tps := make([]kafka.TopicPartition, 0, len(offsets))
	for tp := range offsets {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, func(a, b kafka.TopicPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	rows := make([][]string, len(tps))
	for i, tp := range tps {
		rows[i] = []string{tp.Topic, strconv.FormatInt(int64(tp.Partition), 10), strconv.FormatInt(offsets[tp], 10)}
	}
	return EncodeTable(rows)
}

// Parse decodes a checkpoint file's content; name is used only in errors.
func Parse(name string, data []byte) (map[kafka.TopicPartition]int64, error) {
	rows, err := DecodeTable(name, data, 3)
	if err != nil {
		return nil, err
	}
	offsets := make(map[kafka.TopicPartition]int64, len(rows))
	for i, row := range rows {
		line := 3 + i
		partition, err := strconv.ParseInt(row[1], 10, 32)
		if err != nil || partition < 0 {
			return nil, LineError(name, line, fmt.Sprintf("bad partition %q", row[1]))
		}
		offset, err := strconv.ParseInt(row[2], 10, 64)
		if err != nil {
			return nil, LineError(name, line, fmt.Sprintf("bad offset %q", row[2]))
		}
		tp := kafka.TopicPartition{Topic: row[0], Partition: int32(partition)}
		if _, dup := offsets[tp]; dup {
			return nil, LineError(name, line, fmt.Sprintf("duplicate entry for %s", tp))
		}
		offsets[tp] = offset
	}
	return offsets, nil
}
