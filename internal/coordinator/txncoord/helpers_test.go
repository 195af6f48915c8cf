package txncoord

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/coordinator/runtime"
	"github.com/sluice-io/sluice/internal/coordinator/runtime/runtimetest"
	"github.com/sluice-io/sluice/internal/coordinator/txn"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/testutil"
)

const (
	self  int32 = 1
	other int32 = 2
	// dataTopic's partitions 0 and 1 are led by leaders[0] and leaders[1].
	dataTopic = "orders"
)

// cluster is the metadata a test changes: who leads the transaction state
// partition (at which epoch) and the data topic's partitions.
type cluster struct {
	txnLeader, txnEpoch int32
	leaders             []int32 // of dataTopic's partitions; nil: no such topic
	noTxnTopic          bool
	fenced              map[int32]bool
}

func (c cluster) image(t *testing.T) *metadata.Image {
	t.Helper()
	d := metadata.NewDelta(metadata.EmptyImage())
	var recs []metadata.Record
	for _, id := range []int32{self, other} {
		recs = append(recs, &metadata.RegisterBrokerRecord{BrokerID: id, BrokerEpoch: 1, Fenced: c.fenced[id],
			Endpoints: []metadata.Endpoint{{Name: "PLAINTEXT", Host: "localhost", Port: 9090 + id}}})
	}
	recs = append(recs, &metadata.FeatureLevelRecord{Name: transactionVersionFeature, Level: 2})
	if !c.noTxnTopic {
		recs = append(recs, &metadata.TopicRecord{Name: TransactionStateTopic, TopicID: kafka.UUID{1}},
			&metadata.PartitionRecord{TopicID: kafka.UUID{1}, Partition: 0, Replicas: []int32{self, other},
				ISR: []int32{self, other}, Leader: c.txnLeader, LeaderEpoch: c.txnEpoch})
	}
	if c.leaders != nil {
		recs = append(recs, &metadata.TopicRecord{Name: dataTopic, TopicID: kafka.UUID{2}})
		for p, l := range c.leaders {
			recs = append(recs, &metadata.PartitionRecord{TopicID: kafka.UUID{2}, Partition: int32(p),
				Replicas: []int32{self, other}, ISR: []int32{self, other}, Leader: l})
		}
	}
	for i, r := range recs {
		if err := d.Replay(int64(i), 1, r); err != nil {
			t.Fatalf("replay: %v", err)
		}
	}
	return d.Apply()
}

// markerCall is one WriteTxnMarkers a fake writer received.
type markerCall struct {
	broker int32
	req    *kmsg.WriteTxnMarkersRequest
}

// fakeBrokers answers WriteTxnMarkers for this broker (Local) and the
// other (Peers): each partition's code comes from codes (0 when unset),
// consumed one answer at a time; fail makes the next peer request fail.
type fakeBrokers struct {
	mu       sync.Mutex
	calls    []markerCall
	codes    map[kafka.TopicPartition][]int16
	peerFail int
}

func (f *fakeBrokers) answer(broker int32, req *kmsg.WriteTxnMarkersRequest) *kmsg.WriteTxnMarkersResponse {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, markerCall{broker, req})
	resp := kmsg.NewPtrWriteTxnMarkersResponse()
	resp.SetVersion(req.Version)
	for _, m := range req.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		for _, t := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				tp := kafka.TopicPartition{Topic: t.Topic, Partition: p}
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition = p
				if q := f.codes[tp]; len(q) > 0 {
					rp.ErrorCode, f.codes[tp] = q[0], q[1:]
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
	return resp
}

// failNext makes code the answers of tp's next markers, in order.
func (f *fakeBrokers) failNext(tp kafka.TopicPartition, codes ...int16) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.codes == nil {
		f.codes = map[kafka.TopicPartition][]int16{}
	}
	f.codes[tp] = append(f.codes[tp], codes...)
}

// markers returns, for each broker a marker went to, the partitions it
// named (topic-partition strings) and whether they committed.
func (f *fakeBrokers) received() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		for _, m := range c.req.Markers {
			for _, t := range m.Topics {
				for _, p := range t.Partitions {
					out = append(out, fmt.Sprintf("broker %d: %s-%d pid %d epoch %d commit %v coordinator epoch %d",
						c.broker, t.Topic, p, m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch))
				}
			}
		}
	}
	return out
}

type localWriter struct{ f *fakeBrokers }

func (l localWriter) WriteTxnMarkers(_ context.Context, req *kmsg.WriteTxnMarkersRequest) *kmsg.WriteTxnMarkersResponse {
	return l.f.answer(self, req)
}

type peers struct{ f *fakeBrokers }

func (p peers) Request(_ context.Context, addr string, req kmsg.Request) (kmsg.Response, error) {
	if addr != fmt.Sprintf("localhost:%d", 9090+other) {
		return nil, fmt.Errorf("unexpected address %s", addr)
	}
	p.f.mu.Lock()
	fail := p.f.peerFail > 0
	if fail {
		p.f.peerFail--
	}
	p.f.mu.Unlock()
	if fail {
		return nil, errors.New("connection refused")
	}
	return p.f.answer(other, req.(*kmsg.WriteTxnMarkersRequest)), nil
}

// producerIDs counts allocations.
type producerIDs struct{ next, calls atomic.Int64 }

func (p *producerIDs) NextProducerID(context.Context) (int64, error) {
	p.calls.Add(1)
	return 1000 + p.next.Add(1) - 1, nil
}

// env is a coordinator over an in-memory log and fake brokers.
type env struct {
	t       *testing.T
	log     *runtimetest.MemLog
	brokers *fakeBrokers
	ids     *producerIDs
	clk     clock.Clock
	image   atomic.Pointer[metadata.Image]
	c       *TransactionCoordinator
}

func newEnv(t *testing.T, clk clock.Clock, cl cluster) *env {
	t.Helper()
	e := &env{t: t, log: runtimetest.NewMemLog(), brokers: &fakeBrokers{}, ids: &producerIDs{}, clk: clk}
	e.image.Store(cl.image(t))
	e.c = e.newCoordinator(e.log)
	return e
}

func (e *env) newCoordinator(w runtime.PartitionWriter) *TransactionCoordinator {
	e.t.Helper()
	cfg := txn.DefaultConfig()
	cfg.OffsetsPartitionFor = func(string) int32 { return 0 }
	c, err := New(Options{
		NodeID: self, Txn: cfg, NumPartitions: 1, Writer: w, Image: e.image.Load, ProducerIDs: e.ids,
		Markers: MarkerOptions{Local: localWriter{e.brokers}, Peers: peers{e.brokers}, Listener: "PLAINTEXT",
			RetryBackoff: time.Millisecond},
		Clock: e.clk, TickInterval: time.Millisecond,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(c.Close)
	c.Start()
	return c
}

// setCluster publishes a new image to the test's coordinators.
func (e *env) setCluster(cl cluster, cs ...*TransactionCoordinator) {
	im := cl.image(e.t)
	e.image.Store(im)
	for _, c := range cs {
		c.ApplyImage(im)
	}
}

// waitLoaded waits until c serves the transaction state partition.
func waitLoaded(t *testing.T, c *TransactionCoordinator) {
	t.Helper()
	testutil.Eventually(t, 5*time.Second, func() bool {
		d := c.DescribeTransaction(context.Background(), "probe")
		return d.ErrorCode != 16 && d.ErrorCode != 14 // NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS
	}, "the coordinator never loaded")
}

// waitState waits until id's transaction is in state.
func waitState(t *testing.T, c *TransactionCoordinator, id string, state txn.State) txn.Description {
	t.Helper()
	var d txn.Description
	testutil.Eventually(t, 5*time.Second, func() bool {
		d = c.DescribeTransaction(context.Background(), id)
		return d.ErrorCode == 0 && d.State == state
	}, "%s never reached %v (last %+v)", id, state, &d)
	return d
}

func tp(p int32) kafka.TopicPartition { return kafka.TopicPartition{Topic: dataTopic, Partition: p} }
