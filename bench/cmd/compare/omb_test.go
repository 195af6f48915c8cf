package main

import (
	"bytes"
	"compress/flate"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestFoldProcWindowsSumsRates(t *testing.T) {
	rate, err := foldProcWindows([][]perfWindow{
		{{Records: 1000, RecordsPerSec: 1000}, {Records: 1000, RecordsPerSec: 1000}},
		{{Records: 3000, RecordsPerSec: 1500}},
	})
	if err != nil || rate != 2500 {
		t.Fatalf("rate %v err %v, want 2500", rate, err)
	}
	if _, err := foldProcWindows([][]perfWindow{{{Records: 10, RecordsPerSec: 10}}, nil}); err == nil {
		t.Fatal("a process with no window in the measurement stalled and must fail the run")
	}
	if _, err := foldProcWindows(nil); err == nil {
		t.Fatal("no processes must fail")
	}
}

func TestWaitWindowsFailsWhenAProcessEnds(t *testing.T) {
	line := "1000 records sent, 1000.0 records/sec (0.98 MB/sec), 5.0 ms avg latency, 9.0 ms max latency.\n"
	running := &perfProc{stderr: &boundedBuffer{max: 100}, wins: make([]perfWindow, 3)}
	marks, err := waitWindows(t.Context(), []*perfProc{running}, 2)
	if err != nil || !slices.Equal(marks, []int{3}) {
		t.Fatalf("marks %v err %v", marks, err)
	}
	ended := &perfProc{stderr: &boundedBuffer{max: 100}}
	ended.scan(strings.NewReader(line + "ERROR something\n"))
	if n, done := ended.state(); n != 1 || !done {
		t.Fatalf("scanned %d windows, ended %v", n, done)
	}
	if _, err := waitWindows(t.Context(), []*perfProc{running, ended}, 2); err == nil {
		t.Fatal("a tool that ended before the measurement must fail the run")
	}
}

func TestProducerArgsForKeysPayloadAndCompression(t *testing.T) {
	plain := windowedProducerArgs("b:1", "t", produceSpec{Partitions: 16})
	if !slices.Contains(plain, "--record-size") || slices.Contains(plain, "--key-distribution") {
		t.Fatalf("plain args changed: %v", plain)
	}
	sp := ombPerfSpec
	sp.Seed = 3
	args := windowedProducerArgs("b:1", "t", sp)
	cp := slices.Index(args, "--command-property")
	for _, want := range []string{"--key-distribution", "--record-key-range", "--random-seed"} {
		i := slices.Index(args, want)
		if i < 0 || i > cp {
			t.Fatalf("%s missing or after --command-property: %v", want, args)
		}
	}
	if args[slices.Index(args, "--random-seed")+1] != "3" {
		t.Fatalf("seed not passed: %v", args)
	}
	for _, want := range []string{"acks=all", "enable.idempotence=true", "linger.ms=1", "batch.size=131072"} {
		if i := slices.Index(args, want); i < cp {
			t.Fatalf("%s not a --command-property: %v", want, args)
		}
	}
	z := windowedProducerArgs("b:1", "t", compressionSpec("zstd", "/p.txt"))
	if slices.Contains(z, "--record-size") || z[slices.Index(z, "--payload-file")+1] != "/p.txt" || !slices.Contains(z, "compression.type=zstd") {
		t.Fatalf("compression args: %v", z)
	}
	if compressionSpec("zstd", "x").key() == compressionSpec("lz4", "x").key() || ombPerfSpec.key() == (produceSpec{AcksAll: true, Partitions: 100}).key() {
		t.Fatal("row keys must tell the configurations apart")
	}
}

func TestPayloadCompressesLikeText(t *testing.T) {
	path, err := writePayloadFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	if len(lines) != payloadLines || lines[0] == lines[1] {
		t.Fatalf("%d lines, first two equal: %v", len(lines), lines[0] == lines[1])
	}
	for _, l := range lines {
		if len(l) != recordSize {
			t.Fatalf("a line of %d bytes, want %d", len(l), recordSize)
		}
	}
	// One record compressed alone: text compresses, but far less than all-zero bytes.
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.DefaultCompression)
	w.Write([]byte(lines[0]))
	w.Close()
	if r := float64(recordSize) / float64(buf.Len()); r < 1.5 || r > 6 {
		t.Fatalf("a line compresses %.1fx; want text-like (1.5x to 6x)", r)
	}
	if got := textPayload(rand.New(rand.NewPCG(1, 2))); len(got) != recordSize || bytes.ContainsAny(got, "\n\x00") {
		t.Fatalf("payload of %d bytes or with a newline or NUL", len(got))
	}
}

func TestWindowInside(t *testing.T) {
	var w window
	if w.inside(5) {
		t.Fatal("nothing is inside a window not yet opened")
	}
	w.start.Store(10)
	if w.inside(9) || !w.inside(10) || !w.inside(1<<60) {
		t.Fatal("an open window holds everything from its start")
	}
	w.end.Store(20)
	if w.inside(20) || !w.inside(19) {
		t.Fatal("a closed window ends before its end")
	}
}

func TestWorkloadPhasesRegistered(t *testing.T) {
	want, err := parsePhases("omb,compression")
	if err != nil || !want["omb"] || !want["compression"] {
		t.Fatalf("%v %v", want, err)
	}
	if !strings.Contains(defaultPhases("full"), "omb") || strings.Contains(defaultPhases("quick"), "omb") {
		t.Fatal("omb belongs to the full profile's phases only")
	}
}
