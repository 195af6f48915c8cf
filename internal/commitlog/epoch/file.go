// Package epoch is the leader epoch cache of a partition and its
// leader-epoch-checkpoint file, as Kafka's LeaderEpochFileCache: the start
// offset of every leader epoch in the log, which answers OffsetForLeaderEpoch
// (KIP-101, KIP-279) and drives follower truncation.
package epoch

import (
	"fmt"
	"strconv"

	"github.com/sluice-io/sluice/internal/commitlog/checkpoint"
)

// FileName is the checkpoint file's name in a partition directory.
const FileName = "leader-epoch-checkpoint"

// Entry says that leader epoch Epoch wrote its first batch at StartOffset.
type Entry struct {
	Epoch       int32
	StartOffset int64
}

func (e Entry) String() string {
	return fmt.Sprintf("EpochEntry(epoch=%d, startOffset=%d)", e.Epoch, e.StartOffset)
}

// Format renders entries as the checkpoint file's content: version 0, the
// count, then one "epoch startOffset" line each.
func Format(entries []Entry) []byte {
	rows := make([][]string, len(entries))
	for i, e := range entries {
		rows[i] = []string{strconv.FormatInt(int64(e.Epoch), 10), strconv.FormatInt(e.StartOffset, 10)}
	}
	return checkpoint.EncodeTable(rows)
}

// Parse decodes the checkpoint file's content. Errors name the file (name)
// and line and wrap checkpoint.ErrMalformed. Entries are returned in file
// order; ordering is the cache's business, as in Kafka.
func Parse(name string, data []byte) ([]Entry, error) {
	rows, err := checkpoint.DecodeTable(name, data, 2)
	if err != nil {
		return nil, err
	}
	entries := make([]Entry, len(rows))
	for i, row := range rows {
		line := 3 + i
		epoch, err := strconv.ParseInt(row[0], 10, 32)
		if err != nil || epoch < 0 {
			return nil, checkpoint.LineError(name, line, fmt.Sprintf("bad epoch %q", row[0]))
		}
		offset, err := strconv.ParseInt(row[1], 10, 64)
		if err != nil || offset < 0 {
			return nil, checkpoint.LineError(name, line, fmt.Sprintf("bad start offset %q", row[1]))
		}
		entries[i] = Entry{Epoch: int32(epoch), StartOffset: offset}
	}
	return entries, nil
}
