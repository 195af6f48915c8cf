package integration

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/api"
)

const txnTopic = "txn-orders"

// TestTransactionsSmoke is a transactional producer's first session
// against a real server: begin, produce to two partitions, commit; again,
// abort; again, commit. A read_committed consumer sees only the committed
// records, a read_uncommitted one every record, and ListTransactions the
// id's transaction completed.
func TestTransactionsSmoke(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := startServer(t, t.TempDir(), freePort(t))
	adm := kadm.NewClient(newClient(t, srv.addr))
	checkTransactionKeys(t, ctx, adm)
	if created, err := adm.CreateTopics(ctx, 2, 1, nil, txnTopic); err != nil || created[txnTopic].Err != nil {
		t.Fatalf("create topic: %v %+v", err, created)
	}

	producer := newClient(t, srv.addr, kgo.TransactionalID("smoke"), kgo.DefaultProduceTopic(txnTopic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	transaction := func(commit kgo.TransactionEndTry, values ...string) {
		t.Helper()
		if err := producer.BeginTransaction(); err != nil {
			t.Fatalf("begin: %v", err)
		}
		for i, v := range values {
			rec := &kgo.Record{Value: []byte(v), Partition: int32(i % 2)}
			if err := producer.ProduceSync(ctx, rec).FirstErr(); err != nil {
				t.Fatalf("produce %s in a transaction: %v", v, err)
			}
		}
		if err := producer.EndTransaction(ctx, commit); err != nil {
			t.Fatalf("end transaction (commit %v): %v", commit, err)
		}
	}
	transaction(kgo.TryCommit, "c0", "c1")
	transaction(kgo.TryAbort, "a0", "a1")
	transaction(kgo.TryCommit, "c2", "c3")

	committed := readValues(t, ctx, srv.addr, 4, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if want := []string{"c0", "c1", "c2", "c3"}; !slices.Equal(committed, want) {
		t.Fatalf("read_committed read %q, want %q", committed, want)
	}
	all := readValues(t, ctx, srv.addr, 6, kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	if want := []string{"a0", "a1", "c0", "c1", "c2", "c3"}; !slices.Equal(all, want) {
		t.Fatalf("read_uncommitted read %q, want %q", all, want)
	}

	listed, err := adm.ListTransactions(ctx, nil, nil)
	if err != nil {
		t.Fatalf("list transactions: %v", err)
	}
	var state string
	listed.Each(func(s kadm.ListedTransaction) {
		if s.TxnID == "smoke" {
			state = s.State
		}
	})
	if state != "CompleteCommit" {
		t.Fatalf("transaction smoke listed as %q, want CompleteCommit", state)
	}
}

// readValues reads txnTopic from the start until want records arrived
// and returns their values, sorted. Records arrive in each partition's
// order, and the last committed ones come after the aborted ones, so a
// record that should have been filtered would show up among them.
func readValues(t *testing.T, ctx context.Context, addr string, want int, opts ...kgo.Opt) []string {
	t.Helper()
	cl := newClient(t, addr, append([]kgo.Opt{kgo.ConsumeTopics(txnTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	defer cl.Close()
	var values []string
	for len(values) < want {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %q before the deadline, want %d records", values, want)
		}
		fetches.EachError(func(topic string, p int32, err error) {
			t.Fatalf("fetch %s-%d: %v", topic, p, err)
		})
		fetches.EachRecord(func(r *kgo.Record) { values = append(values, string(r.Value)) })
	}
	slices.Sort(values)
	return values
}

// checkTransactionKeys: the node advertises the transaction coordinator's
// keys at the pinned Kafka release's ranges.
func checkTransactionKeys(t *testing.T, ctx context.Context, adm *kadm.Client) {
	t.Helper()
	versions, err := adm.ApiVersions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var broker kadm.BrokerApiVersions
	versions.Each(func(v kadm.BrokerApiVersions) { broker = v })
	for _, rel := range api.PinnedRelease().APIs {
		if !slices.Contains([]int16{10, 22, 24, 25, 26, 28, 65, 66}, rel.Key) {
			continue
		}
		minV, maxV, ok := broker.KeyVersions(rel.Key)
		if !ok || minV != rel.Min || maxV != rel.Max {
			t.Errorf("%s advertised %d-%d (%v), Kafka %s: %d-%d", kmsg.NameForKey(rel.Key), minV, maxV, ok,
				api.PinnedRelease().Name, rel.Min, rel.Max)
		}
	}
}
