package dumplog

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/vfs"
)

// Topic is the topic of the generated partition; its directory is
// "<log dir>/dumplog-0", laid out as a broker lays it out.
const Topic = "dumplog"

// The workload's shape. Segments are small so the log has several, and the
// index interval is small so every index has many entries.
const (
	segmentBytes       = 8 << 10
	indexIntervalBytes = 256
	segmentIndexBytes  = 1 << 20
	batchCount         = 160
	// baseTimestamp is 2026-01-01T00:00:00Z; record timestamps increase from it.
	baseTimestamp = 1_767_225_600_000

	idempotentProducerA    = 4001
	idempotentProducerB    = 4002
	transactionalProducer  = 4003
	idempotentEpochB       = 5
	transactionalEpoch     = 1
	markerCoordinatorEpoch = 7
	// transactionBatch is the batch index of the transactional data batch;
	// the commit marker follows it.
	transactionBatch = 40
	// epochBumpBatch is where producer A bumps its epoch and restarts its
	// sequences at zero, as a producer does after InitProducerId.
	epochBumpBatch = 80
	// leaderEpochChangeBatch is where the partition leader epoch moves from 0 to 2.
	leaderEpochChangeBatch = 60
	// reopenBatch is the first batch appended after the log is closed and
	// opened again.
	reopenBatch = 100
)

var codecNames = [...]string{"none", "gzip", "snappy", "lz4", "zstd"}

// plannedBatch is one append of the workload.
type plannedBatch struct {
	opts        records.BuilderOptions
	leaderEpoch int32
	records     []plannedRecord
	marker      *MarkerManifest
	timestamp   int64 // marker timestamp
}

type plannedRecord struct {
	timestamp  int64
	key, value *string
	headers    []records.RecordHeader
}

// Generate writes the workload into a new partition directory under logDir
// with commitlog and returns what it wrote. It writes in two runs, as a
// broker that restarts does: the first run closes the log cleanly; then the
// first segment's offset and time index files are removed (the reopened log
// must rebuild them); the second run opens the log again after the clean
// shutdown, appends the rest and closes cleanly. logDir must not already
// hold the partition.
func Generate(logDir string, logger *slog.Logger) (Manifest, error) {
	tp := kafka.TopicPartition{Topic: Topic, Partition: 0}
	dir := filepath.Join(logDir, tp.String())
	if _, err := os.Stat(dir); err == nil {
		return Manifest{}, fmt.Errorf("generate: %s already exists", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Manifest{}, fmt.Errorf("generate: %w", err)
	}
	opts := commitlog.DefaultOptions()
	opts.SegmentBytes = segmentBytes
	opts.IndexIntervalBytes = indexIntervalBytes
	opts.SegmentIndexBytes = segmentIndexBytes
	planned := plan()
	first, err := appendRun(dir, tp, opts, commitlog.StartState{}, planned[:reopenBatch], 0, logger)
	if err != nil {
		return Manifest{}, err
	}
	for _, suffix := range []string{".index", ".timeindex"} {
		if err := os.Remove(segmentPath(dir, 0, suffix)); err != nil {
			return Manifest{}, fmt.Errorf("generate: %w", err)
		}
	}
	end := first[len(first)-1].LastOffset + 1
	clean := commitlog.StartState{RecoveryPoint: end, CleanShutdown: true}
	second, err := appendRun(dir, tp, opts, clean, planned[reopenBatch:], reopenBatch, logger)
	if err != nil {
		return Manifest{}, err
	}
	second[0].Reopened = true
	return describe(dir, append(first, second...))
}

// appendRun opens the log, appends the planned batches (numbered from
// firstIndex in errors) and closes it.
func appendRun(dir string, tp kafka.TopicPartition, opts commitlog.Options, st commitlog.StartState,
	planned []plannedBatch, firstIndex int, logger *slog.Logger) ([]BatchManifest, error) {
	// The clock stands just after the workload's record timestamps, so no
	// producer is idle past producer.id.expiration.ms when the log is
	// reopened (Kafka drops expired producers when it loads a snapshot).
	clk := clock.NewManual(time.UnixMilli(batchTimestamp(batchCount + 10)))
	log, err := commitlog.Open(vfs.Default, dir, tp, opts, clk, st, logger)
	if err != nil {
		return nil, fmt.Errorf("generate: open log: %w", err)
	}
	written, appendErr := appendWorkload(log, planned, firstIndex)
	if err := log.Close(); err != nil && appendErr == nil {
		appendErr = fmt.Errorf("generate: close log: %w", err)
	}
	return written, appendErr
}

// appendWorkload appends every planned batch, one batch per append as a
// producer's request usually carries, and records the offsets assigned.
func appendWorkload(log *commitlog.Log, planned []plannedBatch, firstIndex int) ([]BatchManifest, error) {
	var out []BatchManifest
	for k, p := range planned {
		i := firstIndex + k
		b := records.NewBuilder(p.opts)
		for _, r := range p.records {
			b.Add(r.timestamp, bytesOf(r.key), bytesOf(r.value), r.headers)
		}
		var batch []byte
		var err error
		if p.marker != nil {
			batch, err = records.BuildEndTxnMarker(p.opts, p.marker.Commit, p.marker.CoordinatorEpoch, p.timestamp)
		} else {
			batch, err = b.Build()
		}
		if err != nil {
			return nil, fmt.Errorf("generate: build batch %d: %w", i, err)
		}
		h, err := records.ParseHeader(batch)
		if err != nil {
			return nil, fmt.Errorf("generate: parse built batch %d: %w", i, err)
		}
		var info commitlog.AppendInfo
		if p.marker != nil {
			info, err = log.AppendAsCoordinator(batch, p.leaderEpoch)
		} else {
			info, err = log.Append(batch, p.leaderEpoch)
		}
		if err != nil {
			return nil, fmt.Errorf("generate: append batch %d: %w", i, err)
		}
		if info.Duplicate || info.LastOffset-info.FirstOffset != int64(h.LastOffsetDelta) {
			return nil, fmt.Errorf("generate: batch %d appended as %+v", i, info)
		}
		out = append(out, manifestBatch(p, h, batch, info.FirstOffset))
	}
	return out, nil
}

func manifestBatch(p plannedBatch, h records.Header, batch []byte, base int64) BatchManifest {
	m := BatchManifest{
		BaseOffset:           base,
		LastOffset:           base + int64(h.LastOffsetDelta),
		Count:                h.RecordCount,
		Size:                 int64(len(batch)),
		Codec:                codecNames[h.Compression()],
		CRC:                  binary.BigEndian.Uint32(batch[records.OffsetCRC:]),
		MaxTimestamp:         h.MaxTimestamp,
		ProducerID:           h.ProducerID,
		ProducerEpoch:        h.ProducerEpoch,
		BaseSequence:         h.BaseSequence,
		LastSequence:         -1,
		PartitionLeaderEpoch: p.leaderEpoch,
		Transactional:        h.IsTransactional(),
		Control:              h.IsControl(),
	}
	if h.BaseSequence >= 0 {
		m.LastSequence = h.BaseSequence + h.LastOffsetDelta
	}
	if p.marker != nil {
		m.Records = []RecordManifest{{Offset: base, Timestamp: p.timestamp, Sequence: sequenceOf(h.BaseSequence, 0),
			Key: nil, Value: nil, HeaderKeys: []string{}, Marker: p.marker}}
		return m
	}
	for j, r := range p.records {
		keys := []string{}
		for _, hd := range r.headers {
			keys = append(keys, hd.Key)
		}
		m.Records = append(m.Records, RecordManifest{Offset: base + int64(j), Timestamp: r.timestamp,
			Sequence: sequenceOf(h.BaseSequence, j), Key: r.key, Value: r.value, HeaderKeys: keys})
	}
	return m
}

// sequenceOf is a record's sequence as Kafka derives it: the batch's base
// sequence plus the record's offset delta, or -1 without a producer.
func sequenceOf(baseSequence int32, delta int) int32 {
	if baseSequence < 0 {
		return -1
	}
	return baseSequence + int32(delta)
}

func bytesOf(s *string) []byte {
	if s == nil {
		return nil
	}
	return []byte(*s)
}

func strp(s string) *string { return &s }

// plan is the deterministic workload: codecs rotate per batch; keys,
// values and headers vary per record, some null or empty; producers
// alternate between none, two idempotent ones and one transaction.
func plan() []plannedBatch {
	var out []plannedBatch
	seqA, seqB, epochA := int32(0), int32(0), int16(0)
	for i := 0; i < batchCount; i++ {
		leaderEpoch := int32(0)
		if i >= leaderEpochChangeBatch {
			leaderEpoch = 2
		}
		if i == transactionBatch+1 {
			opts := records.BuilderOptions{ProducerID: transactionalProducer, ProducerEpoch: transactionalEpoch,
				BaseSequence: -1, LogAppendTimeMs: -1}
			out = append(out, plannedBatch{opts: opts, leaderEpoch: leaderEpoch, timestamp: batchTimestamp(i),
				marker: &MarkerManifest{Commit: true, CoordinatorEpoch: markerCoordinatorEpoch}})
			continue
		}
		p := plannedBatch{opts: records.NonIdempotent(i % len(codecNames)), leaderEpoch: leaderEpoch}
		n := 1 + (i*7)%6
		for j := 0; j < n; j++ {
			p.records = append(p.records, plannedRecordAt(i, j))
		}
		switch {
		case i == transactionBatch:
			p.opts.ProducerID, p.opts.ProducerEpoch, p.opts.BaseSequence = transactionalProducer, transactionalEpoch, 0
			p.opts.Transactional = true
		case i%4 == 2:
			if i == epochBumpBatch+2 {
				epochA, seqA = epochA+1, 0
			}
			p.opts.ProducerID, p.opts.ProducerEpoch, p.opts.BaseSequence = idempotentProducerA, epochA, seqA
			seqA += int32(n)
		case i%4 == 3:
			p.opts.ProducerID, p.opts.ProducerEpoch, p.opts.BaseSequence = idempotentProducerB, idempotentEpochB, seqB
			seqB += int32(n)
		}
		out = append(out, p)
	}
	return out
}

func batchTimestamp(i int) int64 { return baseTimestamp + int64(i)*100 }

func plannedRecordAt(i, j int) plannedRecord {
	r := plannedRecord{timestamp: batchTimestamp(i) + int64(j)*3}
	if (i+j)%7 != 3 {
		r.key = strp(fmt.Sprintf("key-%03d-%d", i, j))
	}
	switch {
	case (i+j)%11 == 5:
	case (i+j)%13 == 6:
		r.value = strp("")
	default:
		pad := strings.Repeat(string(rune('a'+(i+j)%26)), (i*31+j*17)%150)
		r.value = strp(fmt.Sprintf("value-%03d-%d-%s", i, j, pad))
	}
	switch j % 3 {
	case 1:
		r.headers = []records.RecordHeader{{Key: "trace", Value: []byte(fmt.Sprintf("t-%d-%d", i, j))}, {Key: "origin"}}
	case 2:
		r.headers = []records.RecordHeader{{Key: "h", Value: []byte("x")}}
	}
	return r
}

// describe groups the written batches by segment (the .log files found)
// and reads back every index, time index and producer snapshot file.
func describe(dir string, written []BatchManifest) (Manifest, error) {
	m := Manifest{Dir: dir, SegmentBytes: segmentBytes, IndexIntervalBytes: indexIntervalBytes}
	names, err := os.ReadDir(dir)
	if err != nil {
		return Manifest{}, fmt.Errorf("generate: list %s: %w", dir, err)
	}
	for _, e := range names {
		var base int64
		switch {
		case strings.HasSuffix(e.Name(), ".log"):
			if _, err := fmt.Sscanf(e.Name(), "%020d.log", &base); err != nil {
				return Manifest{}, fmt.Errorf("generate: segment name %s: %w", e.Name(), err)
			}
			m.Segments = append(m.Segments, SegmentManifest{BaseOffset: base})
		case strings.HasSuffix(e.Name(), ".snapshot"):
			if _, err := fmt.Sscanf(e.Name(), "%020d.snapshot", &base); err != nil {
				return Manifest{}, fmt.Errorf("generate: snapshot name %s: %w", e.Name(), err)
			}
			m.Snapshots = append(m.Snapshots, SnapshotManifest{Offset: base, File: filepath.Join(dir, e.Name()),
				Producers: expectedProducers(written, base)})
		}
	}
	sort.Slice(m.Segments, func(a, b int) bool { return m.Segments[a].BaseOffset < m.Segments[b].BaseOffset })
	sort.Slice(m.Snapshots, func(a, b int) bool { return m.Snapshots[a].Offset < m.Snapshots[b].Offset })
	for _, b := range written {
		k := sort.Search(len(m.Segments), func(k int) bool { return m.Segments[k].BaseOffset > b.BaseOffset }) - 1
		if k < 0 {
			return Manifest{}, fmt.Errorf("generate: batch at offset %d is below the first segment", b.BaseOffset)
		}
		s := &m.Segments[k]
		if n := len(s.Batches); n > 0 {
			b.Position = s.Batches[n-1].Position + s.Batches[n-1].Size
		}
		s.Batches = append(s.Batches, b)
	}
	for k := range m.Segments {
		if err := readSegmentFiles(dir, &m.Segments[k]); err != nil {
			return Manifest{}, err
		}
	}
	return m, nil
}

func segmentPath(dir string, base int64, suffix string) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", base, suffix))
}

// readSegmentFiles fills in the segment's file names, log size and the
// entries of its two indexes, decoded from the raw files (entries hold
// offsets relative to the segment's base offset).
func readSegmentFiles(dir string, s *SegmentManifest) error {
	s.LogFile = segmentPath(dir, s.BaseOffset, ".log")
	s.IndexFile = segmentPath(dir, s.BaseOffset, ".index")
	s.TimeIndexFile = segmentPath(dir, s.BaseOffset, ".timeindex")
	st, err := os.Stat(s.LogFile)
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	s.LogSize = st.Size()
	raw, err := os.ReadFile(s.IndexFile)
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	if len(raw)%8 != 0 {
		return fmt.Errorf("generate: %s is %d bytes, not whole 8-byte entries", s.IndexFile, len(raw))
	}
	s.Index = []IndexEntry{}
	for p := 0; p < len(raw); p += 8 {
		s.Index = append(s.Index, IndexEntry{
			Offset:   s.BaseOffset + int64(int32(binary.BigEndian.Uint32(raw[p:]))),
			Position: int64(int32(binary.BigEndian.Uint32(raw[p+4:]))),
		})
	}
	raw, err = os.ReadFile(s.TimeIndexFile)
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	if len(raw)%12 != 0 {
		return fmt.Errorf("generate: %s is %d bytes, not whole 12-byte entries", s.TimeIndexFile, len(raw))
	}
	s.TimeIndex = []TimeIndexEntry{}
	for p := 0; p < len(raw); p += 12 {
		s.TimeIndex = append(s.TimeIndex, TimeIndexEntry{
			Timestamp: int64(binary.BigEndian.Uint64(raw[p:])),
			Offset:    s.BaseOffset + int64(int32(binary.BigEndian.Uint32(raw[p+8:]))),
		})
	}
	return nil
}
