package quorum

import (
	"errors"
	"fmt"
	"log/slog"
	"math"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/vfs"
)

// MetadataPartition returns __cluster_metadata-0, the partition holding the metadata log.
func MetadataPartition() kafka.TopicPartition {
	return kafka.TopicPartition{Topic: "__cluster_metadata", Partition: 0}
}

// LogEntryStore keeps Raft entries in a commitlog.Log, one record batch per
// entry: base offset = index-1, partition leader epoch = term, one record
// whose key is the entry type byte and whose value is the entry data
// (docs/metadata-records.md). Kafka's tools can read the segments.
type LogEntryStore struct {
	log   *commitlog.Log
	clk   clock.Clock
	count uint64 // last stored index (= log end offset)
}

// OpenLogEntryStore opens the metadata log in dir (…/__cluster_metadata-0).
// Recovery re-validates the whole log: the metadata log is small, and a
// torn tail must go before Raft trusts the entries.
func OpenLogEntryStore(fsys vfs.FS, dir string, clk clock.Clock, logger *slog.Logger) (*LogEntryStore, error) {
	opts := commitlog.DefaultOptions()
	opts.RetentionMs, opts.RetentionBytes = -1, -1 // Raft entries go only by truncation and snapshots
	opts.MaxMessageBytes = math.MaxInt32
	// Segments small enough that compaction behind a snapshot frees space:
	// only whole segments are deleted.
	opts.SegmentBytes = metadataSegmentBytes
	l, err := commitlog.Open(fsys, dir, MetadataPartition(), opts, clk, commitlog.StartState{}, logger)
	if err != nil {
		return nil, fmt.Errorf("quorum: open metadata log %s: %w", dir, err)
	}
	return &LogEntryStore{log: l, clk: clk, count: uint64(l.LogEndOffset())}, nil
}

// metadataSegmentBytes is the segment size of the metadata log.
const metadataSegmentBytes = 8 << 20

// Load reads every batch from the log start offset back into entries.
func (s *LogEntryStore) Load() ([]*raftpb.Entry, error) {
	var out []*raftpb.Entry
	end := s.log.LogEndOffset()
	start := s.log.LogStartOffset()
	for next := start; next < end; {
		res, err := s.log.Read(next, 1<<20, end, true)
		if err != nil {
			return nil, fmt.Errorf("quorum: read metadata log at %d: %w", next, err)
		}
		buf, err := res.Bytes()
		if err != nil {
			return nil, fmt.Errorf("quorum: read metadata log at %d: %w", next, err)
		}
		if len(buf) == 0 {
			return nil, fmt.Errorf("quorum: metadata log returned nothing at %d below end %d", next, end)
		}
		_, err = records.Batches(buf, func(h records.Header, batch []byte) error {
			if h.BaseOffset < next {
				return nil
			}
			e, err := batchToEntry(h, batch)
			if err != nil {
				return err
			}
			if want := uint64(start) + uint64(len(out)) + 1; e.GetIndex() != want {
				return fmt.Errorf("quorum: metadata log entry at offset %d out of sequence (want %d)", h.BaseOffset, want-1)
			}
			out = append(out, e)
			next = h.NextOffset()
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func batchToEntry(h records.Header, batch []byte) (*raftpb.Entry, error) {
	if err := records.CheckCRC(batch); err != nil {
		return nil, fmt.Errorf("quorum: metadata batch at %d: %w", h.BaseOffset, err)
	}
	if h.LastOffsetDelta != 0 || h.PartitionLeaderEpoch < 0 {
		return nil, fmt.Errorf("quorum: metadata batch at %d is not one raft entry", h.BaseOffset)
	}
	e := &raftpb.Entry{Index: proto.Uint64(uint64(h.BaseOffset) + 1), Term: proto.Uint64(uint64(h.PartitionLeaderEpoch))}
	n := 0
	err := records.ForEachRecord(batch, func(r records.Record) error {
		n++
		if len(r.Key) != 1 {
			return fmt.Errorf("quorum: metadata batch at %d: record key of %d bytes, want the entry type", h.BaseOffset, len(r.Key))
		}
		e.Type = raftpb.EntryType(r.Key[0]).Enum()
		if len(r.Value) > 0 {
			e.Data = append([]byte(nil), r.Value...)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("quorum: metadata batch at %d: %w", h.BaseOffset, err)
	}
	if n != 1 {
		return nil, fmt.Errorf("quorum: metadata batch at %d has %d records, want 1", h.BaseOffset, n)
	}
	return e, nil
}

func (s *LogEntryStore) entryBatch(e *raftpb.Entry) ([]byte, error) {
	if e.GetTerm() > math.MaxInt32 {
		return nil, fmt.Errorf("quorum: term %d does not fit a leader epoch", e.GetTerm())
	}
	opts := records.NonIdempotent(records.NoCompression)
	opts.BaseOffset = int64(e.GetIndex()) - 1
	opts.PartitionLeaderEpoch = int32(e.GetTerm())
	b := records.NewBuilder(opts)
	b.Add(s.clk.Now().UnixMilli(), []byte{byte(e.GetType())}, e.GetData(), nil)
	return b.Build()
}

// Append writes entries (truncating a conflicting suffix) and flushes.
// Consecutive entries of one term go in one commitlog append.
func (s *LogEntryStore) Append(entries []*raftpb.Entry) error {
	if len(entries) == 0 {
		return nil
	}
	start := uint64(s.log.LogStartOffset())
	first := entries[0].GetIndex()
	if first <= start {
		return fmt.Errorf("quorum: append at index %d below the metadata log start offset %d", first, start)
	}
	if first > s.count+1 {
		return fmt.Errorf("quorum: append at index %d leaves a gap after last index %d", first, s.count)
	}
	keep := first - 1
	if keep < s.count {
		if err := s.log.TruncateTo(int64(keep)); err != nil {
			return fmt.Errorf("quorum: truncate metadata log to %d: %w", keep, err)
		}
		s.count = keep
	}
	for start := 0; start < len(entries); {
		end := start
		var batches []byte
		for end < len(entries) && entries[end].GetTerm() == entries[start].GetTerm() {
			b, err := s.entryBatch(entries[end])
			if err != nil {
				return err
			}
			batches = append(batches, b...)
			end++
		}
		info, err := s.log.Append(batches, int32(entries[start].GetTerm()))
		if err != nil {
			return fmt.Errorf("quorum: append metadata entries %d..%d: %w", entries[start].GetIndex(), entries[end-1].GetIndex(), err)
		}
		if info.FirstOffset != int64(entries[start].GetIndex())-1 {
			return fmt.Errorf("quorum: metadata entry %d landed at offset %d", entries[start].GetIndex(), info.FirstOffset)
		}
		s.count = entries[end-1].GetIndex()
		start = end
	}
	if err := s.log.Flush(); err != nil {
		return fmt.Errorf("quorum: flush metadata log: %w", err)
	}
	return nil
}

// Compact raises the log start offset to index (the offset of entry
// index+1); whole segments below it are deleted.
func (s *LogEntryStore) Compact(index uint64) error {
	if index > s.count {
		return fmt.Errorf("quorum: compact metadata log to index %d beyond last index %d", index, s.count)
	}
	if err := s.log.IncrementLogStartOffset(int64(index)); err != nil {
		return fmt.Errorf("quorum: compact metadata log to index %d: %w", index, err)
	}
	return nil
}

// Reset deletes every segment and restarts the log empty at offset index.
func (s *LogEntryStore) Reset(index uint64) error {
	if err := s.log.TruncateFullyAndStartAt(int64(index)); err != nil {
		return fmt.Errorf("quorum: reset metadata log at index %d: %w", index, err)
	}
	s.count = index
	return nil
}

// Close closes the log.
func (s *LogEntryStore) Close() error {
	if err := s.log.Close(); err != nil {
		return errors.Join(fmt.Errorf("quorum: close metadata log"), err)
	}
	return nil
}

// LogStartOffset is the first offset still in the log.
func (s *LogEntryStore) LogStartOffset() int64 { return s.log.LogStartOffset() }

// ReadBatches returns the stored batches (one per entry) from offset up to
// below end, about maxBytes but at least one batch: what observers fetch.
// Below the log start it fails with commitlog.ErrOffsetOutOfRange.
func (s *LogEntryStore) ReadBatches(offset int64, maxBytes int32, end int64) ([]byte, error) {
	res, err := s.log.Read(offset, maxBytes, end, true)
	if err != nil {
		return nil, fmt.Errorf("quorum: read metadata log at %d: %w", offset, err)
	}
	buf, err := res.Bytes()
	if err != nil {
		return nil, fmt.Errorf("quorum: read metadata log at %d: %w", offset, err)
	}
	return buf, nil
}
