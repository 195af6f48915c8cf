package main

import (
	"testing"

	"github.com/sluice-io/sluice/bench/internal/perftest"
)

func TestWindowLine(t *testing.T) {
	w, ok := perftest.ParseWindow("4170 records sent, 41700.0 records/sec (40.72 MB/sec), 1.2 ms avg latency, 15.0 ms max latency.")
	if !ok || w.Records != 4170 || w.AvgLatencyMs != 1.2 || w.MaxLatencyMs != 15.0 {
		t.Fatalf("window line: %+v %v", w, ok)
	}
	// The summaries end with percentiles and are not windows.
	if _, ok := perftest.ParseWindow("291298 records sent, 41254.496530 records/sec (40.29 MB/sec), 390.21 ms avg latency, 960.00 ms max latency, 450 ms 50th, 918 ms 95th, 947 ms 99th, 958 ms 99.9th."); ok {
		t.Fatal("summary read as a window")
	}
}

func TestGCSummary(t *testing.T) {
	got := gcSummary("gc 12 @3.456s 1%: 0.015+1.2+0.003 ms clock, 0.03+0.1/0.5/0+0.006 ms cpu, 4->4->1 MB, 5 MB goal, 0 MB stacks, 0 MB globals, 2 P")
	if got != "gc12 0.015+1.2+0.003ms" {
		t.Fatalf("gcSummary = %q", got)
	}
}

func TestPauseMs(t *testing.T) {
	for _, c := range []struct {
		msg  string
		want float64
		ok   bool
	}{
		{"GC(0) Pause Young (Normal) (G1 Evacuation Pause) 19M->5M(380M) 9.940ms", 9.94, true},
		{`Safepoint "G1CollectForAllocation", Time since last: 487923457 ns, Reaching safepoint: 4336 ns, Cleanup: 69997 ns, At safepoint: 10027339 ns, Total: 10101672 ns`, 10.101672, true},
		{"GC(4) Concurrent Mark Cycle 36.365ms", 0, false},
	} {
		got, ok := pauseMs(c.msg)
		if ok != c.ok || got != c.want {
			t.Errorf("pauseMs(%q) = %v, %v; want %v, %v", c.msg, got, ok, c.want, c.ok)
		}
	}
}

func TestJVMLine(t *testing.T) {
	m := jvmLine.FindStringSubmatch("[2026-12-05T01:02:34.442+0000] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 19M->5M(380M) 9.940ms")
	if m == nil || m[1] != "2026-12-05T01:02:34.442+0000" {
		t.Fatalf("jvm line: %q", m)
	}
}

func TestAfterComm(t *testing.T) {
	if got := afterComm("123 (kafka (x) y) D 1 2"); got != "D 1 2" {
		t.Fatalf("afterComm = %q", got)
	}
}
