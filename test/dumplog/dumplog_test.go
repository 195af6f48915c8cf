package dumplog

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestGenerateCoversTheShapes checks that the workload really has what the
// interop test claims to exercise, and that Sluice's indexes follow Kafka's
// LogSegment rule, without Java.
func TestGenerateCoversTheShapes(t *testing.T) {
	m, err := Generate(t.TempDir(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Segments) < 4 {
		t.Errorf("%d segments, want at least 4", len(m.Segments))
	}
	codecs, producers := map[string]bool{}, map[int64]bool{}
	var nullKeys, nullValues, emptyValues, headers, markers, transactional int
	for _, b := range m.Batches() {
		if b.Reopened && b.Position == 0 {
			t.Errorf("the log was reopened at a segment boundary (offset %d), want inside the active segment", b.BaseOffset)
		}
		codecs[b.Codec] = true
		producers[b.ProducerID] = true
		if b.Control {
			markers++
		}
		if b.Transactional && !b.Control {
			transactional++
		}
		for _, r := range b.Records {
			if r.Marker != nil {
				continue
			}
			switch {
			case r.Key == nil:
				nullKeys++
			case r.Value == nil:
				nullValues++
			case *r.Value == "":
				emptyValues++
			}
			if len(r.HeaderKeys) > 0 {
				headers++
			}
		}
	}
	for _, c := range codecNames {
		if !codecs[c] {
			t.Errorf("no %s batch", c)
		}
	}
	for _, p := range []int64{-1, idempotentProducerA, idempotentProducerB, transactionalProducer} {
		if !producers[p] {
			t.Errorf("no batch of producer %d", p)
		}
	}
	if nullKeys == 0 || nullValues == 0 || emptyValues == 0 || headers == 0 || markers != 1 || transactional != 1 {
		t.Errorf("null keys %d, null values %d, empty values %d, with headers %d, markers %d, transactional %d",
			nullKeys, nullValues, emptyValues, headers, markers, transactional)
	}
	for _, s := range m.Segments {
		if len(s.Index) < 3 || len(s.TimeIndex) < 3 {
			t.Errorf("segment %d: %d index and %d time index entries, want several", s.BaseOffset, len(s.Index), len(s.TimeIndex))
		}
		for _, d := range compareSegmentSelf(s, m.IndexIntervalBytes) {
			t.Error(d)
		}
	}
	if len(m.Snapshots) < 2 {
		t.Errorf("%d producer snapshots, want one per roll and one at close", len(m.Snapshots))
	}
}

// sampleOutput is DumpLogSegments 4.4.0 output in the shape it prints, cut
// down to one file of each kind.
const sampleOutput = `Dumping /d/00000000000000000005.log
Log starting offset: 5
baseOffset: 5 lastOffset: 6 count: 2 baseSequence: 0 lastSequence: 1 producerId: 9 producerEpoch: 0 partitionLeaderEpoch: 3 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1000 size: 120 magic: 2 compresscodec: zstd crc: 4000000000 isvalid: true
| offset: 5 CreateTime: 999 keySize: 1 valueSize: 0 sequence: 0 headerKeys: [a,b] key: k payload: 
| offset: 6 CreateTime: 1000 keySize: -1 valueSize: 5 sequence: 1 headerKeys: [] payload: a b c
baseOffset: 7 lastOffset: 7 count: 1 baseSequence: -1 lastSequence: -1 producerId: 9 producerEpoch: 0 partitionLeaderEpoch: 3 isTransactional: true isControl: true deleteHorizonMs: OptionalLong.empty position: 120 CreateTime: 1001 size: 78 magic: 2 compresscodec: none crc: 1 isvalid: true
| offset: 7 CreateTime: 1001 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: COMMIT coordinatorEpoch: 7
Dumping /d/00000000000000000005.index
offset: 6 position: 0
Dumping /d/00000000000000000005.timeindex
timestamp: 1000 offset: 6
Dumping /d/00000000000000000007.snapshot
producerId: 9 producerEpoch: 0 coordinatorEpoch: 7 currentTxnFirstOffset: OptionalLong[5] lastTimestamp: 1001 firstSequence: 0 lastSequence: 1 lastOffset: 6 offsetDelta: 1 timestamp: 1001
`

func sampleManifest() Manifest {
	k, empty, abc := "k", "", "a b c"
	return Manifest{Segments: []SegmentManifest{{
		BaseOffset: 5, LogFile: "/d/00000000000000000005.log", IndexFile: "/d/00000000000000000005.index",
		TimeIndexFile: "/d/00000000000000000005.timeindex", LogSize: 198,
		Batches: []BatchManifest{
			{BaseOffset: 5, LastOffset: 6, Count: 2, Size: 120, Codec: "zstd", CRC: 4000000000, MaxTimestamp: 1000,
				ProducerID: 9, BaseSequence: 0, LastSequence: 1, PartitionLeaderEpoch: 3, Records: []RecordManifest{
					{Offset: 5, Timestamp: 999, Sequence: 0, Key: &k, Value: &empty, HeaderKeys: []string{"a", "b"}},
					{Offset: 6, Timestamp: 1000, Sequence: 1, Value: &abc, HeaderKeys: []string{}},
				}},
			{BaseOffset: 7, LastOffset: 7, Count: 1, Position: 120, Size: 78, Codec: "none", CRC: 1, MaxTimestamp: 1001,
				ProducerID: 9, BaseSequence: -1, LastSequence: -1, PartitionLeaderEpoch: 3, Transactional: true, Control: true,
				Records: []RecordManifest{{Offset: 7, Timestamp: 1001, Sequence: -1, HeaderKeys: []string{},
					Marker: &MarkerManifest{Commit: true, CoordinatorEpoch: 7}}}},
		},
		Index:     []IndexEntry{{Offset: 6, Position: 0}},
		TimeIndex: []TimeIndexEntry{{Timestamp: 1000, Offset: 6}},
	}}, Snapshots: []SnapshotManifest{{Offset: 7, File: "/d/00000000000000000007.snapshot", Producers: []ProducerSnapshotEntry{{
		ProducerID: 9, CoordinatorEpoch: 7, CurrentTxnFirstOffset: 5, LastTimestamp: 1001, FirstSequence: 0,
		LastSequence: 1, LastOffset: 6, OffsetDelta: 1, BatchTimestamp: 1001}}}}}
}

// TestCompareSample checks the parser and the comparison on known output:
// it agrees with the matching manifest, and each kind of difference or
// tool complaint is reported.
func TestCompareSample(t *testing.T) {
	m := sampleManifest()
	// The sample's index entry is not where Kafka's rule puts one; the
	// self-check is covered by TestGenerateCoversTheShapes, so leave it out.
	onlyTool := func(diffs []string) []string {
		return slices.DeleteFunc(diffs, func(d string) bool { return strings.Contains(d, "Kafka's rule") })
	}
	if diffs := onlyTool(Compare(m, ParseDump(sampleOutput, ""))); len(diffs) != 0 {
		t.Fatalf("sample should agree:\n%s", strings.Join(diffs, "\n"))
	}
	cases := map[string]struct {
		stdout, stderr string
		want           string
	}{
		"codec":        {strings.Replace(sampleOutput, "compresscodec: zstd", "compresscodec: lz4", 1), "", "compresscodec lz4, want zstd"},
		"null key":     {strings.Replace(sampleOutput, " key: k payload: ", " payload: ", 1), "", "key null"},
		"payload":      {strings.Replace(sampleOutput, "payload: a b c", "payload: a b", 1), "", `payload "a b"`},
		"index entry":  {strings.Replace(sampleOutput, "offset: 6 position: 0", "offset: 6 position: 8", 1), "", "00000000000000000005.index: entries"},
		"time entry":   {strings.Replace(sampleOutput, "timestamp: 1000 offset: 6", "timestamp: 1001 offset: 6", 1), "", "timeindex: entries"},
		"snapshot":     {strings.Replace(sampleOutput, "OptionalLong[5]", "OptionalLong.empty", 1), "", "snapshot: producers"},
		"invalid":      {strings.Replace(sampleOutput, "isvalid: true", "isvalid: false", 1), "", "isvalid false"},
		"trailing":     {sampleOutput + "Dumping /d/00000000000000000005.log\nFound 7 invalid bytes at the end of 00000000000000000005.log\n", "", "invalid bytes"},
		"missing file": {strings.Split(sampleOutput, "Dumping /d/00000000000000000007.snapshot")[0], "", "snapshot: not dumped"},
		"mismatch":     {sampleOutput, "Mismatches in :/d/00000000000000000005.index\n  Index offset: 6, log offset: 7\n", "stderr: Mismatches in"},
		"gap":          {sampleOutput, "Non-consecutive offsets in /d/00000000000000000005.log\n  5 is followed by 7\n", "stderr:   5 is followed by 7"},
	}
	for name, c := range cases {
		diffs := strings.Join(onlyTool(Compare(m, ParseDump(c.stdout, c.stderr))), "\n")
		if !strings.Contains(diffs, c.want) {
			t.Errorf("%s: want a difference containing %q, got:\n%s", name, c.want, diffs)
		}
	}
	// A later segment's offsets start at its base offset, which the tool
	// reports against -1: that alone is not a problem.
	benign := "Non-consecutive offsets in /d/00000000000000000005.log\n  -1 is followed by 5\n"
	if diffs := onlyTool(Compare(m, ParseDump(sampleOutput, benign))); len(diffs) != 0 {
		t.Errorf("segment start reported as a problem: %v", diffs)
	}
}

// TestKafkaDumpLogSegments runs Kafka's own DumpLogSegments (the pinned
// release, through bench/kafka-ref) over every file Generate wrote and
// requires exact agreement with the manifest. It needs Java and the
// reference kit, so it runs only with SLUICE_INTEROP=1
// (test/interop/storage_dumplog_test.sh sets it).
func TestKafkaDumpLogSegments(t *testing.T) {
	if os.Getenv("SLUICE_INTEROP") != "1" {
		t.Skip("interop test: set SLUICE_INTEROP=1 (needs Java and bench/kafka-ref)")
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("java is not available: cannot run Kafka's DumpLogSegments")
	}
	kafkaRef, err := filepath.Abs(filepath.Join("..", "..", "bench", "kafka-ref"))
	if err != nil {
		t.Fatal(err)
	}
	logDir := t.TempDir()
	m, err := Generate(logDir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}

	var files, indexes []string
	for _, s := range m.Segments {
		files = append(files, s.LogFile, s.IndexFile, s.TimeIndexFile)
		indexes = append(indexes, s.IndexFile, s.TimeIndexFile)
	}
	for _, s := range m.Snapshots {
		files = append(files, s.File)
	}
	stdout, stderr := runDumpLog(t, kafkaRef, "--deep-iteration", "--print-data-log", "--files", strings.Join(files, ","))
	d := ParseDump(stdout, stderr)
	diffs := Compare(m, d)
	sanityOut, sanityErr := runDumpLog(t, kafkaRef, "--index-sanity-check", "--files", strings.Join(indexes, ","))
	diffs = append(diffs, SanityProblems(sanityOut, sanityErr, m)...)

	batches, recs, idx, tidx := 0, 0, 0, 0
	for _, s := range m.Segments {
		batches += len(s.Batches)
		idx += len(s.Index)
		tidx += len(s.TimeIndex)
		for _, b := range s.Batches {
			recs += len(b.Records)
		}
	}
	t.Logf("compared %d segments, %d batches, %d records, %d index and %d time index entries, %d producer snapshots",
		len(m.Segments), batches, recs, idx, tidx, len(m.Snapshots))
	if len(diffs) > 0 {
		t.Errorf("DumpLogSegments disagrees with what Sluice wrote (%d differences):\n%s",
			len(diffs), strings.Join(diffs, "\n"))
	}
	checkTamperedIndexIsCaught(t, kafkaRef, m.Segments[0])
}

// checkTamperedIndexIsCaught copies a segment, points one offset index
// entry at the wrong batch, and requires the tool and the comparison to
// say so: the agreement above is not the tool staying silent.
func checkTamperedIndexIsCaught(t *testing.T, kafkaRef string, s SegmentManifest) {
	t.Helper()
	if len(s.Index) < 2 {
		t.Fatalf("segment %d has too few index entries to tamper with", s.BaseOffset)
	}
	dir := t.TempDir()
	copied := s
	copied.LogFile = filepath.Join(dir, filepath.Base(s.LogFile))
	copied.IndexFile = filepath.Join(dir, filepath.Base(s.IndexFile))
	copied.TimeIndexFile = filepath.Join(dir, filepath.Base(s.TimeIndexFile))
	for from, to := range map[string]string{s.LogFile: copied.LogFile, s.IndexFile: copied.IndexFile, s.TimeIndexFile: copied.TimeIndexFile} {
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if to == copied.IndexFile {
			// The second entry's position becomes the first's.
			copy(data[12:16], data[4:8])
		}
		if err := os.WriteFile(to, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stdout, stderr := runDumpLog(t, kafkaRef, "--files", copied.IndexFile)
	diffs := strings.Join(Compare(Manifest{Segments: []SegmentManifest{copied}}, ParseDump(stdout, stderr)), "\n")
	if !strings.Contains(diffs, "stderr: Mismatches in :"+copied.IndexFile) {
		t.Errorf("a wrong index entry went unreported; differences:\n%s", diffs)
	}
}

// runDumpLog runs Kafka's DumpLogSegments with args and returns its stdout
// and stderr; a non-zero exit fails the test.
func runDumpLog(t *testing.T, kafkaRef string, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kafkaRef, append([]string{"tool", "dump-log"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kafka-ref tool dump-log: %v\nstderr:\n%s", err, stderr.String())
	}
	return stdout.String(), stderr.String()
}
