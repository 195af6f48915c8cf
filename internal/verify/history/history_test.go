package history

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

func TestRecorderRoundTrip(t *testing.T) {
	now := time.Unix(100, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); now = now.Add(time.Millisecond); return now }
	var buf bytes.Buffer
	r := NewRecorder(clock, &buf)
	r.Record(Op{Kind: Send, Process: "producer-1", Topic: "t", Partition: 2, Offset: -1, Value: "producer-1-0"})
	r.Record(Op{Kind: Ack, Process: "producer-1", Topic: "t", Partition: 2, Offset: 7, Value: "producer-1-0", Latency: 3 * time.Millisecond})
	r.Record(Op{Kind: FaultStart, Process: "nemesis", Fault: "kill", Nodes: []int32{2}})
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	want := r.Ops()
	if len(got) != 3 || len(want) != 3 {
		t.Fatalf("read %d ops, recorded %d", len(got), len(want))
	}
	for i := range got {
		if got[i].String() != want[i].String() {
			t.Errorf("op %d: read %s, recorded %s", i, got[i], want[i])
		}
		if got[i].Index != int64(i) || got[i].Time <= 0 {
			t.Errorf("op %d: index %d time %v", i, got[i].Index, got[i].Time)
		}
	}
}

func TestReadRejectsGarbage(t *testing.T) {
	if _, err := Read(bytes.NewBufferString("{\"kind\":\"send\"}\nnot json\n")); err == nil {
		t.Fatal("garbage line accepted")
	}
}
