package verify

import (
	"bytes"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/verify/history"
)

// TestOpCounterCountsSplitWrites feeds a Recorder's JSON lines to the
// counter in every chunk size, so patterns split between writes are
// counted once.
func TestOpCounterCountsSplitWrites(t *testing.T) {
	var lines bytes.Buffer
	rec := history.NewRecorder(time.Now, &lines)
	want := opCounts{}
	for i := range 50 {
		kinds := []history.Kind{history.Send, history.Ack, history.Poll, history.Fail, history.Info, history.FaultStart}
		k := kinds[i%len(kinds)]
		rec.Record(history.Op{Kind: k, Process: "p", Value: "p-1", Detail: `"kind":"ack" inside a string`})
		switch k {
		case history.Ack:
			want.acks++
		case history.Poll:
			want.polls++
		case history.Fail:
			want.fails++
		case history.Info:
			want.infos++
		}
	}
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	data := lines.Bytes()
	for size := 1; size <= len(data); size += 7 {
		c := &opCounter{}
		var sink bytes.Buffer
		w := c.wrap(&sink)
		for i := 0; i < len(data); i += size {
			if _, err := w.Write(data[i:min(i+size, len(data))]); err != nil {
				t.Fatal(err)
			}
		}
		if got := c.snapshot(); got != want {
			t.Fatalf("chunks of %d: counted %+v, want %+v", size, got, want)
		}
		if !bytes.Equal(sink.Bytes(), data) {
			t.Fatalf("chunks of %d: the writer changed the bytes", size)
		}
	}
}

func TestMakeRunDirNeverReusesADirectory(t *testing.T) {
	root := t.TempDir()
	at := time.Date(2026, 12, 4, 19, 30, 0, 0, time.UTC)
	a, err := makeRunDir(root, "queue", at)
	if err != nil {
		t.Fatal(err)
	}
	b, err := makeRunDir(root, "queue", at)
	if err != nil {
		t.Fatal(err)
	}
	if a == b || a != root+"/queue-20261204T193000Z" || b != a+"-2" {
		t.Fatalf("dirs %s and %s", a, b)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"defaults with a binary", Config{Binary: "/bin/sluice"}, true},
		{"no binary, no brokers", Config{}, false},
		{"external cluster", Config{Brokers: []string{"h:9092"}}, true},
		{"unknown workload", Config{Binary: "b", Workload: "bank"}, false},
		{"RF above nodes", Config{Binary: "b", Nodes: 1}, false},
		{"min ISR above RF", Config{Binary: "b", ReplicationFactor: 2, MinInsyncReplicas: 3}, false},
	} {
		err := tc.cfg.withDefaults().validate()
		if (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}
