package main

import (
	"fmt"
	"strings"
	"testing"
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
		partsRSSAfterRow(c), partsHWMRow(c), partsShutdownRow(c)}
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
	if !strings.Contains(b.String(), "10000 partitions") || !strings.Contains(b.String(), "2048 MiB") {
		t.Errorf("method text does not give the full profile's size:\n%s", b.String())
	}
}
