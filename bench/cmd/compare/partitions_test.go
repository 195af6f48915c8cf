package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestCheckEndOffsets(t *testing.T) {
	for _, c := range []struct {
		name  string
		ends  map[int32]int64
		acked []int64
		want  string // substring of the error; "" for none
	}{
		{name: "equal", ends: map[int32]int64{0: 3, 1: 0, 2: 7}, acked: []int64{3, 0, 7}},
		{name: "lost", ends: map[int32]int64{0: 3, 1: 0, 2: 5}, acked: []int64{3, 0, 7}, want: "2 records missing, 0 extra (partition 2 end 5, acknowledged 7)"},
		{name: "duplicated", ends: map[int32]int64{0: 4, 1: 0}, acked: []int64{3, 0}, want: "0 records missing, 1 extra"},
		{name: "partition missing", ends: map[int32]int64{0: 3}, acked: []int64{3, 2}, want: "2 records missing, 0 extra (partition 1 end -1, acknowledged 2)"},
		{name: "partition too many", ends: map[int32]int64{0: 3, 1: 2, 2: 0}, acked: []int64{3, 2}, want: "3 partitions listed, 2 created"},
	} {
		err := checkEndOffsets(c.ends, c.acked)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestPartsSteps(t *testing.T) {
	for n, want := range map[int]string{200: "[200]", 5000: "[5000]", 10000: "[5000 10000]", 12001: "[5000 10000 12001]"} {
		if got := fmt.Sprint(partsSteps(n)); got != want {
			t.Errorf("partsSteps(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestPartitionsPhaseRegistered(t *testing.T) {
	want, err := parsePhases("partitions")
	if err != nil || !want["partitions"] {
		t.Fatalf("parsePhases: %v, %v", want, err)
	}
	if !strings.Contains(defaultPhases("full"), "partitions") || strings.Contains(defaultPhases("quick"), "partitions") {
		t.Errorf("default phases: full %q, quick %q", defaultPhases("full"), defaultPhases("quick"))
	}
	full, _ := profileNamed("full")
	c := partsConfigFor(full)
	if c.Partitions != 10000 {
		t.Errorf("full profile: %d partitions, issue 24 asks for 10,000", c.Partitions)
	}
	keys := map[string]bool{}
	rows := []row{partsCreateRow(c), partsRSSIdleRow(c), partsProduceRow(c), partsCPURow(c), partsAckRow(c, "p50"), partsAckRow(c, "p99"),
		partsRSSAfterRow(c), partsHWMRow(c), partsShutdownRow(c), partsCPUFixedRow(c)}
	for _, q := range []string{"p50", "p99", "p99.9", "max"} {
		rows = append(rows, partsE2ERow(c, q))
	}
	for _, kill := range []bool{true, false} {
		for _, all := range []bool{true, false} {
			rows = append(rows, partsRestartRow(c, kill, all))
		}
	}
	for _, rw := range rows {
		if keys[rw.Key] {
			t.Errorf("row key %s twice", rw.Key)
		}
		keys[rw.Key] = true
		if !strings.HasPrefix(rw.Label, "10000 partitions, 1 broker: ") {
			t.Errorf("row %s label %q does not say the partition count", rw.Key, rw.Label)
		}
		if rw.HigherIsBetter != (rw.Key == "parts-produce") {
			t.Errorf("row %s: HigherIsBetter %v", rw.Key, rw.HigherIsBetter)
		}
	}
	if l := partsRestartRow(c, true, true).Label; !strings.Contains(l, "kill -9") || !strings.Contains(l, "every one of the 10000 partitions") {
		t.Errorf("kill -9 restart label %q", l)
	}
	var b strings.Builder
	renderPartsMethod(&b, full)
	if !strings.Contains(b.String(), "10000 partitions") || !strings.Contains(b.String(), "2048 MiB") || !strings.Contains(b.String(), "30 s window after 15 s") {
		t.Errorf("method text does not give the full profile's size:\n%s", b.String())
	}
}

// The fixed-rate run covers every partition of the phase's topic at the profile's
// fixed-rate window, from the end of what the produce run left.
func TestPartsFixedSpec(t *testing.T) {
	full, _ := profileNamed("full")
	c := partsConfigFor(full)
	sp := partsFixedSpec(c, full)
	if sp.Topic != partsTopic || sp.Partitions != 10000 || sp.KeyRange != partsKeyRange || sp.Producers != c.Producers {
		t.Errorf("spec %+v does not cover the phase's topic", sp)
	}
	if !sp.EndToEnd || !sp.FromEnd {
		t.Errorf("spec %+v: want an end-to-end run from the end offsets", sp)
	}
	if mbps := sp.Rate * recordSize / 1e6; mbps != partsFixedMBps {
		t.Errorf("rate %.1f MB/s, want %.1f", mbps, partsFixedMBps)
	}
	if sp.Warm != 15*time.Second || sp.Measure != 30*time.Second {
		t.Errorf("window %s after %s, want the profile's RateMeasure after RateWarm", sp.Measure, sp.Warm)
	}
}

func TestE2EAssign(t *testing.T) {
	got, err := e2eAssign(3, nil)
	if err != nil || fmt.Sprint(offsetsOf(got)) != "[0 0 0]" {
		t.Errorf("from the start: %v, %v", offsetsOf(got), err)
	}
	got, err = e2eAssign(3, map[int32]int64{0: 7, 1: 0, 2: 215})
	if err != nil || fmt.Sprint(offsetsOf(got)) != "[7 0 215]" {
		t.Errorf("from the ends: %v, %v", offsetsOf(got), err)
	}
	if _, err := e2eAssign(3, map[int32]int64{0: 7, 2: 215}); err == nil || !strings.Contains(err.Error(), "partition 1") {
		t.Errorf("a partition without an end offset: %v", err)
	}
}

func offsetsOf(assign map[int32]kgo.Offset) []int64 {
	out := make([]int64, len(assign))
	for p, o := range assign {
		out[p] = o.EpochOffset().Offset
	}
	return out
}
