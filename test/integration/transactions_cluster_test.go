package integration

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/testbin"
	"github.com/sluice-io/sluice/internal/testcluster"
	"github.com/sluice-io/sluice/internal/testutil"
)

// TestTransactionsAcrossBrokers: in a 3-node in-process cluster, three
// transactional producers (whose coordinators are spread over the
// __transaction_state partitions' leaders) each commit and abort
// transactions over a topic whose partitions are led by different
// brokers, so that verifications and markers cross brokers. A
// read_committed reader then counts exactly the committed records, a
// read_uncommitted one every record.
func TestTransactionsAcrossBrokers(t *testing.T) {
	logs := &testbin.SyncBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("cluster log:\n%s", logs.String())
		}
	})
	c := testcluster.Start(t, testcluster.Options{Nodes: 3, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), Overrides: map[string]string{
		"transaction.state.log.num.partitions": "3",
		"offsets.topic.num.partitions":         "3",
	}})
	addrs := c.RunningBrokerAddrs()
	adm := clusterAdmin(t, addrs)
	const topic = "txn-spread"
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := adm.CreateTopic(ctx, 3, 1, nil, topic)
		if err != nil {
			return err
		}
		if errors.Is(resp.Err, kerr.TopicAlreadyExists) {
			return nil
		}
		return resp.Err
	}, "create topic")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	committed, written := 0, 0
	for p := range 3 {
		producer, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.TransactionalID(fmt.Sprintf("spread-%d", p)),
			kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			t.Fatal(err)
		}
		for txn := range 3 {
			if err := producer.BeginTransaction(); err != nil {
				t.Fatalf("producer %d: begin: %v", p, err)
			}
			for part := range int32(3) {
				rec := &kgo.Record{Value: fmt.Appendf(nil, "%d-%d-%d", p, txn, part), Partition: part}
				if err := producer.ProduceSync(ctx, rec).FirstErr(); err != nil {
					t.Fatalf("producer %d: produce: %v", p, err)
				}
			}
			written += 3
			commit := kgo.TryCommit
			if txn == 1 {
				commit = kgo.TryAbort
			} else {
				committed += 3
			}
			if err := producer.EndTransaction(ctx, commit); err != nil {
				t.Fatalf("producer %d: end transaction %d: %v", p, txn, err)
			}
		}
		producer.Close()
	}
	count := func(opts ...kgo.Opt) int {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addrs...), kgo.ConsumeTopics(topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		n, want := 0, committed
		if len(opts) == 0 {
			want = written
		}
		for n < want {
			fetches := cl.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("read %d records before the deadline, want %d", n, want)
			}
			fetches.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s-%d: %v", topic, p, err) })
			fetches.EachRecord(func(r *kgo.Record) {
				if len(opts) > 0 && r.Value[2] == '1' {
					t.Errorf("read_committed read %s of an aborted transaction", r.Value)
				}
				n++
			})
		}
		return n
	}
	if n := count(kgo.FetchIsolationLevel(kgo.ReadCommitted())); n != committed {
		t.Fatalf("read_committed read %d records, want %d", n, committed)
	}
	if n := count(); n != written {
		t.Fatalf("read_uncommitted read %d records, want %d", n, written)
	}
}
