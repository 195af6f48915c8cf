package integration

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/testutil"
)

// TestCompactedTopic runs the log cleaner inside a real server: keyed
// updates across many segments are compacted to the latest value per key at
// its original offset, a tombstone disappears after delete.retention.ms, and
// a record without a key is refused with INVALID_RECORD.
func TestCompactedTopic(t *testing.T) {
	srv := startServer(t, t.TempDir(), freePort(t), "log.cleaner.backoff.ms=100")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, srv.addr))
	const topic = "compacted"
	segMs, dirty, delRet := "150", "0.01", "0"
	resp, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{
		"cleanup.policy": ptr("compact"), "segment.ms": &segMs,
		"min.cleanable.dirty.ratio": &dirty, "delete.retention.ms": &delRet,
	}, topic)
	if err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}

	cl := newClient(t, srv.addr, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	const keys, rounds = 10, 8
	latest := map[string]int64{} // key -> offset of its last write
	for r := 0; r < rounds; r++ {
		for k := 0; k < keys; k++ {
			rec := &kgo.Record{Key: []byte(fmt.Sprintf("k%d", k)), Value: []byte(fmt.Sprintf("r%d", r))}
			if r == rounds-1 && k == 0 {
				rec.Value = nil // the last word on k0 is a tombstone
			}
			res := cl.ProduceSync(ctx, rec)
			if err := res.FirstErr(); err != nil {
				t.Fatal(err)
			}
			latest[string(rec.Key)] = res[0].Record.Offset
		}
		// Part of the test: the server's real clock passes segment.ms, so
		// the next append rolls a segment.
		time.Sleep(200 * time.Millisecond)
	}
	// One more record rolls the last round out of the active segment.
	if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte("roll"), Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	err = cl.ProduceSync(ctx, &kgo.Record{Value: []byte("no key")}).FirstErr()
	if !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("keyless record on a compacted topic: %v, want INVALID_RECORD", err)
	}

	var got map[string][]int64
	deadline, _ := ctx.Deadline()
	testutil.EventuallyNoError(t, time.Until(deadline), func() error {
		got = readByKey(t, ctx, srv.addr, topic)
		if !compacted(got, latest) {
			return fmt.Errorf("offsets by key %v", got)
		}
		return nil
	}, "compacted")
	for k, off := range latest {
		if k == "k0" {
			continue
		}
		if len(got[k]) != 1 || got[k][0] != off {
			t.Errorf("key %s: offsets %v, want only %d", k, got[k], off)
		}
	}
}

func ptr(s string) *string { return &s }

// compacted reports whether every key but the tombstoned k0 appears once and
// k0 not at all.
func compacted(got map[string][]int64, latest map[string]int64) bool {
	if len(got["k0"]) != 0 {
		return false
	}
	for k := range latest {
		if k != "k0" && len(got[k]) != 1 {
			return false
		}
	}
	return true
}

// readByKey reads the whole topic from offset 0 and returns each key's offsets.
func readByKey(t *testing.T, ctx context.Context, addr, topic string) map[string][]int64 {
	t.Helper()
	adm := kadm.NewClient(newClient(t, addr))
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup(topic, 0)
	cl := newClient(t, addr, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	out := map[string][]int64{}
	for {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		done := false
		fs.EachRecord(func(r *kgo.Record) {
			out[string(r.Key)] = append(out[string(r.Key)], r.Offset)
			if r.Offset >= end.Offset-1 {
				done = true
			}
		})
		if done {
			return out
		}
	}
}
