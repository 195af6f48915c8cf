package cleaner

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/vfs"
)

// TestKafkaDumpLogSegmentsReadsCleanedLog has Kafka's own DumpLogSegments
// (the pinned release through bench/kafka-ref) read a log the cleaner
// compacted: every record it prints must be one the log serves, at the same
// offset with the same key and value, the tombstone batch must show its
// delete horizon, and no index mismatch or corruption may be reported. Run
// by test/interop/storage_compaction_test.sh (SLUICE_INTEROP=1).
func TestKafkaDumpLogSegmentsReadsCleanedLog(t *testing.T) {
	if os.Getenv("SLUICE_INTEROP") == "" {
		t.Skip("interop test: set SLUICE_INTEROP=1 (needs Java and bench/kafka-ref)")
	}
	kafkaRef, err := filepath.Abs(filepath.Join("..", "..", "..", "bench", "kafka-ref"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "compacted-0")
	clk := clock.NewManual(testStart)
	opts := compactOptions()
	opts.SegmentBytes = 4096
	l, err := commitlog.Open(vfs.Default, dir, testTP, opts, clk, commitlog.StartState{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 8 {
		codec := []int{records.NoCompression, records.GzipCompression, records.LZ4Compression, records.ZstdCompression}[round%4]
		for k := 0; k < 30; k += 5 {
			var recs []kv
			for j := k; j < k+5; j++ {
				recs = append(recs, kv{key: key(j), value: "v" + strconv.Itoa(round) + "-" + strconv.Itoa(j)})
			}
			appendRecords(t, l, clk, codec, recs...)
		}
	}
	appendRecords(t, l, clk, records.NoCompression, kv{key: key(1), tombstone: true}, kv{key: key(2), tombstone: true})
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	c, err := New(vfs.Default, &logSource{logs: []*commitlog.Log{l}}, testCleanerOptions(), clk, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !cleanOnce(t, c) {
		t.Fatal("log not cleaned")
	}
	want, _ := readAll(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	var files []string
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if ext := filepath.Ext(n.Name()); ext == ".log" || ext == ".index" || ext == ".timeindex" {
			files = append(files, filepath.Join(dir, n.Name()))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kafkaRef, "tool", "dump-log", "--deep-iteration", "--print-data-log", "--files", strings.Join(files, ","))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kafka-ref tool dump-log: %v\nstderr:\n%s", err, stderr.String())
	}
	out, errOut := stdout.String(), stderr.String()
	for _, bad := range []string{"Mismatches", "isvalid: false", "corrupt", "Exception"} {
		if strings.Contains(out, bad) || strings.Contains(errOut, bad) {
			t.Fatalf("DumpLogSegments reports %q:\n%s\nstderr:\n%s", bad, out, errOut)
		}
	}
	got := parseDumpRecords(out)
	if len(got) != len(want) {
		t.Fatalf("DumpLogSegments shows %d records, the log serves %d:\n%s", len(got), len(want), out)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("record %d: DumpLogSegments shows %+v, the log serves %+v", i, got[i], want[i])
		}
	}
	horizon := "deleteHorizonMs: OptionalLong[" + strconv.FormatInt(clk.Now().Add(opts.DeleteRetention).UnixMilli(), 10) + "]"
	if !strings.Contains(out, horizon) {
		t.Fatalf("no batch shows %q:\n%s", horizon, out)
	}
}

// dumpRecordLine matches a record line of DumpLogSegments --print-data-log;
// a null value prints no payload.
var dumpRecordLine = regexp.MustCompile(`^\| offset: (\d+) .* key: (\S+)(?: payload: (\S*))?$`)

func parseDumpRecords(out string) []readRecord {
	var recs []readRecord
	for _, line := range strings.Split(out, "\n") {
		m := dumpRecordLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		off, _ := strconv.ParseInt(m[1], 10, 64)
		recs = append(recs, readRecord{offset: off, key: m[2], value: m[3], tombstone: !strings.Contains(line, " payload: ")})
	}
	return recs
}
