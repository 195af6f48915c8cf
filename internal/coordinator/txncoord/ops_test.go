package txncoord

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/coordinator/txn"
	"github.com/sluice-io/sluice/internal/kafka"
)

// gatedLog fails every Read until open is closed: the shard stays loading.
type gatedLog struct {
	writer interface {
		Append(ctx context.Context, partition int32, batch []byte) (int64, error)
		Read(ctx context.Context, partition int32, offset int64, maxBytes int32) ([]byte, int64, error)
	}
	open chan struct{}
}

func (l gatedLog) Append(ctx context.Context, p int32, b []byte) (int64, error) {
	return l.writer.Append(ctx, p, b)
}

func (l gatedLog) Read(ctx context.Context, p int32, off int64, max int32) ([]byte, int64, error) {
	select {
	case <-l.open:
		return l.writer.Read(ctx, p, off, max)
	default:
		return nil, 0, errors.New("not the leader yet")
	}
}

// TestCoordinatorAvailability: NOT_COORDINATOR before the partition is led
// here, COORDINATOR_LOAD_IN_PROGRESS while it loads, served after.
func TestCoordinatorAvailability(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil, cluster{txnLeader: other, leaders: []int32{self}})
	open := make(chan struct{})
	c := e.newCoordinator(gatedLog{e.log, open})
	c.ApplyImage(e.image.Load())
	init := txn.InitRequest{TransactionalID: "tx", TimeoutMs: 1000, ProducerID: -1, ProducerEpoch: -1}
	if res := c.InitProducerID(ctx, init); res.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("led elsewhere: %v", kerr.ErrorForCode(res.ErrorCode))
	}
	e.setCluster(cluster{txnLeader: self, leaders: []int32{self}}, c)
	if res := c.InitProducerID(ctx, init); res.ErrorCode != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("loading: %v", kerr.ErrorForCode(res.ErrorCode))
	}
	if _, _, code := c.ListTransactions(ctx, txn.ListFilter{DurationMs: -1}); code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("ListTransactions while loading: %v", kerr.ErrorForCode(code))
	}
	if e.ids.calls.Load() != 0 {
		t.Fatalf("%d producer ids allocated for requests that could not run", e.ids.calls.Load())
	}
	close(open)
	waitLoaded(t, c)
	if res := c.InitProducerID(ctx, init); res.ErrorCode != 0 || res.ProducerEpoch != 0 {
		t.Fatalf("loaded: %+v", res)
	}
}

// TestProducerIDsOnlyWhenNeeded: a new id takes one producer id; a second
// InitProducerId bumps the epoch without one.
func TestProducerIDsOnlyWhenNeeded(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil, cluster{txnLeader: self, leaders: []int32{self}})
	e.c.ApplyImage(e.image.Load())
	waitLoaded(t, e.c)
	init := txn.InitRequest{TransactionalID: "tx", TimeoutMs: 1000, ProducerID: -1, ProducerEpoch: -1}
	first := e.c.InitProducerID(ctx, init)
	second := e.c.InitProducerID(ctx, init)
	if first.ProducerID != second.ProducerID || second.ProducerEpoch != first.ProducerEpoch+1 || e.ids.calls.Load() != 1 {
		t.Fatalf("first %+v second %+v with %d allocations", first, second, e.ids.calls.Load())
	}
	init.TimeoutMs = int32(txn.DefaultConfig().MaxTimeout.Milliseconds()) + 1
	if res := e.c.InitProducerID(ctx, init); res.ErrorCode != kerr.InvalidTransactionTimeout.Code {
		t.Fatalf("timeout over the maximum: %v", kerr.ErrorForCode(res.ErrorCode))
	}
}

// TestDescribeAndList: DescribeTransactions and ListTransactions' filters
// over the shards.
func TestDescribeAndList(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil, cluster{txnLeader: self, leaders: []int32{self, self}})
	e.c.ApplyImage(e.image.Load())
	waitLoaded(t, e.c)
	a := begin(t, e.c, "a", 60000, tp(0), tp(1))
	e.c.InitProducerID(ctx, txn.InitRequest{TransactionalID: "b", TimeoutMs: 1000, ProducerID: -1, ProducerEpoch: -1})

	d := e.c.DescribeTransaction(ctx, "a")
	if d.ErrorCode != 0 || d.State != txn.Ongoing || d.ProducerID != a.ProducerID || d.TimeoutMs != 60000 ||
		!slices.Equal(d.Partitions, []kafka.TopicPartition{tp(0), tp(1)}) {
		t.Fatalf("describe a: %+v", d)
	}
	if d := e.c.DescribeTransaction(ctx, "nope"); d.ErrorCode != kerr.TransactionalIDNotFound.Code {
		t.Fatalf("describe unknown: %v", kerr.ErrorForCode(d.ErrorCode))
	}
	if d := e.c.DescribeTransaction(ctx, ""); d.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("describe empty: %v", kerr.ErrorForCode(d.ErrorCode))
	}
	ids := func(l []txn.Listing) (out []string) {
		for _, x := range l {
			out = append(out, x.TransactionalID)
		}
		return out
	}
	all, unknown, code := e.c.ListTransactions(ctx, txn.ListFilter{DurationMs: -1})
	if code != 0 || !slices.Equal(ids(all), []string{"a", "b"}) || len(unknown) != 0 {
		t.Fatalf("list all: %v %v %v", ids(all), unknown, code)
	}
	ongoing, unknown, _ := e.c.ListTransactions(ctx, txn.ListFilter{States: []string{"Ongoing", "Bogus"}, DurationMs: -1})
	if !slices.Equal(ids(ongoing), []string{"a"}) || !slices.Equal(unknown, []string{"Bogus"}) {
		t.Fatalf("list Ongoing: %v unknown %v", ids(ongoing), unknown)
	}
	byProducer, _, _ := e.c.ListTransactions(ctx, txn.ListFilter{ProducerIDs: []int64{a.ProducerID}, DurationMs: -1})
	if !slices.Equal(ids(byProducer), []string{"a"}) {
		t.Fatalf("list by producer: %v", ids(byProducer))
	}
	// As in Kafka, an id with no transaction (start -1) passes a duration
	// filter; a: started just now, does not.
	long, _, _ := e.c.ListTransactions(ctx, txn.ListFilter{DurationMs: 3_600_000})
	if !slices.Equal(ids(long), []string{"b"}) {
		t.Fatalf("transactions older than an hour: %v", ids(long))
	}
}

// TestFindCoordinatorCreatesTheTopicCapped: the first lookup creates
// __transaction_state with Kafka's configs, the replication factor capped
// at the unfenced brokers and min.insync.replicas at that factor, and
// answers COORDINATOR_NOT_AVAILABLE; once led, the leader is found.
func TestFindCoordinatorCreatesTheTopicCapped(t *testing.T) {
	e := newEnv(t, nil, cluster{noTxnTopic: true, fenced: map[int32]bool{other: true}})
	type creation struct {
		name    string
		parts   int32
		rf      int16
		configs map[string]string
	}
	var created []creation
	c, err := New(Options{NodeID: self, Txn: txn.DefaultConfig(), Writer: e.log, Image: e.image.Load, ProducerIDs: e.ids,
		Markers: MarkerOptions{Local: localWriter{e.brokers}},
		CreateTopic: func(_ context.Context, name string, parts int32, rf int16, configs map[string]string) error {
			created = append(created, creation{name, parts, rf, configs})
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, code := c.FindCoordinator(context.Background(), "tx", "PLAINTEXT"); code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("before the topic: %v", kerr.ErrorForCode(code))
	}
	if len(created) != 1 {
		t.Fatalf("created %+v", created)
	}
	got := created[0]
	if got.name != TransactionStateTopic || got.parts != 50 || got.rf != 1 || got.configs["min.insync.replicas"] != "1" ||
		got.configs["cleanup.policy"] != "compact" || got.configs["segment.bytes"] != "104857600" ||
		got.configs["compression.type"] != "uncompressed" || got.configs["unclean.leader.election.enable"] != "false" {
		t.Fatalf("created %+v", got)
	}
	e.setCluster(cluster{txnLeader: other, leaders: []int32{self}})
	node, code := c.FindCoordinator(context.Background(), "tx", "PLAINTEXT")
	if code != 0 || node.NodeID != other || node.Port != 9090+other {
		t.Fatalf("coordinator %+v %v", node, kerr.ErrorForCode(code))
	}
}
