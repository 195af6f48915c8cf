package main

import (
	"os"
	"strings"
	"testing"
)

func TestNoFileTarget(t *testing.T) {
	for _, c := range []struct {
		cur, hard, need, want uint64
		fails                 bool
	}{
		{cur: 20000, hard: 20000, need: 1656, want: 20000},
		{cur: 1024, hard: 1048576, need: 1656, want: 1656},
		{cur: 1024, hard: 1500, need: 1656, fails: true},
	} {
		got, err := noFileTarget(c.cur, c.hard, c.need)
		if (err != nil) != c.fails || got != c.want {
			t.Errorf("noFileTarget(%d, %d, %d) = %d, %v; want %d, fails %v", c.cur, c.hard, c.need, got, err, c.want, c.fails)
		}
	}
}

func TestConnectionsPhaseRegistered(t *testing.T) {
	want, err := parsePhases("omb,connections")
	if err != nil || !want["connections"] {
		t.Fatalf("parsePhases: %v, %v", want, err)
	}
	if !strings.Contains(defaultPhases("full"), "connections") || strings.Contains(defaultPhases("quick"), "connections") {
		t.Errorf("default phases: full %q, quick %q", defaultPhases("full"), defaultPhases("quick"))
	}
	keys := map[string]bool{}
	for _, rw := range []row{rowConnRSSBefore, rowConnRSSIdle, rowConnPerIdle, connMaxRow(false), connMaxRow(true), connP99Row(false), connP99Row(true)} {
		if keys[rw.Key] {
			t.Errorf("row key %s twice", rw.Key)
		}
		keys[rw.Key] = true
	}
	if !connMaxRow(true).HigherIsBetter || connP99Row(true).HigherIsBetter || !strings.Contains(connMaxRow(true).Label, "with 1000 idle") {
		t.Errorf("rows: %+v %+v", connMaxRow(true), connP99Row(true))
	}
	var b strings.Builder
	renderMethod(&b, profile{Warm: 5, Measure: 20, RateWarm: 5, RateMeasure: 30}, want)
	if !strings.Contains(b.String(), "10 s\n  measured") || !strings.Contains(b.String(), "1000 idle connections open") {
		t.Errorf("method text:\n%s", b.String())
	}
}

// TestIdleConnsLive opens 1,000 idle connections to a Sluice broker started from
// SLUICE_COMPARE_BIN (skipped without it); all must answer again afterwards.
func TestIdleConnsLive(t *testing.T) {
	if os.Getenv("SLUICE_COMPARE_BIN") == "" {
		t.Skip("SLUICE_COMPARE_BIN names the sluice binary to start")
	}
	if err := raiseNoFileLimit(connIdle + 256); err != nil {
		t.Fatal(err)
	}
	b, ctx := liveSluice(t)
	if err := createTopic(ctx, b, "idle", 1); err != nil {
		t.Fatal(err)
	}
	before, err := rssBytes(b.PID())
	if err != nil {
		t.Fatal(err)
	}
	idle, err := openIdleConns(ctx, seeds(b.Bootstrap())[0], "idle", connIdle, 32)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.close()
	after, err := rssBytes(b.PID())
	if err != nil {
		t.Fatal(err)
	}
	if n := idle.alive(); n != connIdle {
		t.Fatalf("%d of %d idle connections answered", n, connIdle)
	}
	t.Logf("VmRSS %d -> %d KiB: %.1f KiB per idle connection", before>>10, after>>10, float64(after-before)/1024/connIdle)
}
