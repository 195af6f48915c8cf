package integration

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/testutil"
)

// TestKillWhileProducing kills the server with SIGKILL while an idempotent
// acks=all producer keeps sending, restarts it on the same port and data,
// and checks that every acknowledged record is read back exactly once (and
// that no record, acknowledged or not, is read twice).
func TestKillWhileProducing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dataDir := t.TempDir()
	port := freePort(t)
	srv := startServer(t, dataDir, port)
	const killTopic = "survivors"
	adm := kadm.NewClient(newClient(t, srv.addr))
	if res, err := adm.CreateTopics(ctx, 2, 1, nil, killTopic); err != nil || res[killTopic].Err != nil {
		t.Fatalf("create topic: %v %+v", err, res)
	}

	producer := newClient(t, srv.addr, kgo.DefaultProduceTopic(killTopic))
	var mu sync.Mutex
	acked := map[string]bool{}
	ackCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	stopProducing := make(chan struct{})
	produced := make(chan int)
	go func() {
		i := 0
		defer func() { produced <- i }()
		for {
			select {
			case <-stopProducing:
				return
			default:
			}
			v := strconv.Itoa(i)
			producer.Produce(ctx, &kgo.Record{Value: []byte(v)}, func(_ *kgo.Record, err error) {
				if err == nil {
					mu.Lock()
					acked[v] = true
					mu.Unlock()
				}
			})
			i++
			if i%50 == 0 {
				time.Sleep(5 * time.Millisecond) // the load's pace
			}
		}
	}()
	waitAcks := func(n int) {
		t.Helper()
		deadline, _ := ctx.Deadline()
		testutil.EventuallyNoError(t, time.Until(deadline), func() error {
			if got := ackCount(); got < n {
				return fmt.Errorf("only %d records acknowledged", got)
			}
			return nil
		}, "%d records acknowledged", n)
	}
	waitAcks(500)
	srv.kill()
	before := ackCount()
	srv = startServer(t, dataDir, port)
	waitAcks(before + 500)
	close(stopProducing)
	sent := <-produced
	if err := producer.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}

	consumer := newClient(t, srv.addr, kgo.ConsumeTopics(killTopic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ends, err := kadm.NewClient(consumer).ListEndOffsets(ctx, killTopic)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
	seen := map[string]int{}
	for read := int64(0); read < total; {
		fetches := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records before the deadline", read, total)
		}
		fetches.EachError(func(tp string, p int32, err error) { t.Fatalf("fetch %s-%d: %v", tp, p, err) })
		fetches.EachRecord(func(r *kgo.Record) {
			seen[string(r.Value)]++
			read++
		})
	}
	mu.Lock()
	defer mu.Unlock()
	for v := range acked {
		if seen[v] != 1 {
			t.Errorf("acknowledged record %s read %d times", v, seen[v])
		}
	}
	for v, n := range seen {
		if n > 1 {
			t.Errorf("record %s read %d times", v, n)
		}
	}
	t.Logf("sent %d, acknowledged %d (%d before the kill), log holds %d", sent, len(acked), before, total)
}
