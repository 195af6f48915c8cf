package metrics

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/testbin"
	"github.com/sluice-io/sluice/internal/testutil"
)

// TestDashboardAndRulesUseExportedSeries runs a real node through produce,
// fetch, a classic and a KIP-848 consumer group and a compacted topic, then
// scrapes its /metrics until every series the dashboard and the rules name
// is there, with the labels they match on or group by; it fails naming
// those still missing.
func TestDashboardAndRulesUseExportedSeries(t *testing.T) {
	exprs, recorded := deployExpressions(t)
	uses, labels, err := usedSeries(exprs)
	if err != nil {
		t.Fatal(err)
	}
	ports, err := testbin.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	srv := testbin.StartServer(t, binaryPath, testbin.ServerConfig{DataDir: t.TempDir(), Overrides: []string{
		metricsListenerKey + "=" + metricsAddr,
		"log.cleaner.backoff.ms=100",
		"offsets.topic.num.partitions=2",
	}})
	addrs := []string{srv.Addr()}
	runWorkload(t, addrs)

	testutil.EventuallyNoError(t, 20*time.Second, func() error {
		got, err := scrape(context.Background(), "http://"+metricsAddr+"/metrics")
		if err != nil {
			return err
		}
		if left := missing(uses, labels, got, recorded); len(left) > 0 {
			return fmt.Errorf("%d series or labels used but not exported:\n%s", len(left), strings.Join(left, "\n"))
		}
		return nil
	}, "every series of the dashboard and the rules exported")
}

// runWorkload gives a node every kind of traffic the dashboard shows.
func runWorkload(t *testing.T, addrs []string) {
	t.Helper()
	cl := newClient(t, addrs)
	adm := kadm.NewClient(cl)
	createTopic(t, adm, "orders", 3, 1, nil)
	produce(t, cl, "orders", 200, 100)
	consumeAndCommit(t, addrs, "metrics-classic", "orders", 200, false)
	consumeAndCommit(t, addrs, "metrics-consumer", "orders", 200, true)
	produce(t, cl, "orders", 50, 100) // lag for both groups

	segMs, dirty := "100", "0.01"
	compact := "compact"
	createTopic(t, adm, "compacted", 1, 1, map[string]*string{
		"cleanup.policy": &compact, "segment.ms": &segMs, "min.cleanable.dirty.ratio": &dirty,
	})
	// Rewrite the same 20 keys, each round after segment.ms (so the next
	// append rolls a segment), until the cleaner has removed overwritten
	// records: reading the partition gives fewer than were written.
	written := 0
	testutil.EventuallyNoError(t, 45*time.Second, func() error {
		produce(t, cl, "compacted", 20, 10)
		written += 20
		read, err := countRecords(addrs, "compacted")
		if err != nil {
			return err
		}
		if read >= written {
			return fmt.Errorf("read %d of the %d records written: not compacted yet", read, written)
		}
		return nil
	}, "the log cleaner compacts the compacted topic")
}

// countRecords reads partition 0 of topic from its start to its high
// watermark and returns how many records it holds.
func countRecords(addrs []string, topic string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, err
	}
	end, ok := ends.Lookup(topic, 0)
	if !ok || end.Err != nil {
		return 0, fmt.Errorf("end offset of %s-0: %v", topic, end.Err)
	}
	n := 0
	for next := int64(0); next < end.Offset; {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("read %s-0 up to %d of %d: %w", topic, next, end.Offset, err)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			n++
			next = r.Offset + 1
		})
	}
	return n, nil
}
