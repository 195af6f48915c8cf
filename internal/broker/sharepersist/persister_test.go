package sharepersist

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

const (
	self  int32 = 1
	other int32 = 2
)

var dataTopic = kafka.UUID{7, 7}

// stateImage has two brokers and a state topic of two partitions led by
// leaders[0] and leaders[1] (-1: no leader); nil leaders leaves the topic
// out.
func stateImage(t *testing.T, leaders []int32) *metadata.Image {
	t.Helper()
	d := metadata.NewDelta(metadata.EmptyImage())
	var recs []metadata.Record
	for _, id := range []int32{self, other} {
		recs = append(recs, &metadata.RegisterBrokerRecord{BrokerID: id, BrokerEpoch: 1,
			Endpoints: []metadata.Endpoint{{Name: "PLAINTEXT", Host: "localhost", Port: 9090 + id}}})
	}
	if leaders != nil {
		recs = append(recs, &metadata.TopicRecord{Name: StateTopic, TopicID: kafka.UUID{1}})
		for p, l := range leaders {
			recs = append(recs, &metadata.PartitionRecord{TopicID: kafka.UUID{1}, Partition: int32(p),
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

// fakeCoordinator answers state requests with scripted error codes, then
// from the state it holds.
type fakeCoordinator struct {
	mu     sync.Mutex
	codes  []int16 // answered first, one per request
	state  map[int32]State
	seen   []kmsg.Request
	addrs  []string
	remote bool
}

func (f *fakeCoordinator) serve(_ context.Context, req kmsg.Request) (kmsg.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen = append(f.seen, req)
	var code int16
	if len(f.codes) > 0 {
		code, f.codes = f.codes[0], f.codes[1:]
	}
	switch r := req.(type) {
	case *kmsg.WriteShareGroupStateRequest:
		resp := r.ResponseKind().(*kmsg.WriteShareGroupStateResponse)
		for _, t := range r.Topics {
			rt := kmsg.NewWriteShareGroupStateResponseTopic()
			rt.TopicID = t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewWriteShareGroupStateResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, code
				if code == 0 {
					st := State{StateEpoch: p.StateEpoch, StartOffset: p.StartOffset}
					for _, b := range p.StateBatches {
						st.Batches = append(st.Batches, StateBatch{b.FirstOffset, b.LastOffset, b.DeliveryState, b.DeliveryCount})
					}
					f.state[p.Partition] = st
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	case *kmsg.ReadShareGroupStateRequest:
		resp := r.ResponseKind().(*kmsg.ReadShareGroupStateResponse)
		for _, t := range r.Topics {
			rt := kmsg.NewReadShareGroupStateResponseTopic()
			rt.TopicID = t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewReadShareGroupStateResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, code
				st, ok := f.state[p.Partition]
				if !ok {
					st.StartOffset = -1
				}
				rp.StateEpoch, rp.StartOffset = st.StateEpoch, st.StartOffset
				for _, b := range st.Batches {
					sb := kmsg.NewReadShareGroupStateResponseTopicPartitionStateBatch()
					sb.FirstOffset, sb.LastOffset, sb.DeliveryState, sb.DeliveryCount = b.FirstOffset, b.LastOffset, b.DeliveryState, b.DeliveryCount
					rp.StateBatches = append(rp.StateBatches, sb)
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	}
	return nil, errors.New("unexpected request")
}

// Request makes the fake a remote broker too.
func (f *fakeCoordinator) Request(ctx context.Context, addr string, req kmsg.Request) (kmsg.Response, error) {
	f.mu.Lock()
	f.addrs = append(f.addrs, addr)
	f.mu.Unlock()
	return f.serve(ctx, req)
}

func newPersister(t *testing.T, leaders []int32, f *fakeCoordinator) *Persister {
	im := stateImage(t, leaders)
	return New(Options{
		NodeID: self, Image: func() *metadata.Image { return im },
		PartitionFor: func(string, int32) int32 { return 1 },
		Local:        f.serve, Peers: f, Listener: "PLAINTEXT",
		Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond,
	})
}

func TestWriteThenReadLocal(t *testing.T) {
	f := &fakeCoordinator{state: map[int32]State{}}
	p := newPersister(t, []int32{other, self}, f)
	key := Key{GroupID: "g", TopicID: dataTopic, Partition: 3}
	ctx := context.Background()

	st, err := p.Read(ctx, key, 0)
	if err != nil || st.StartOffset != -1 {
		t.Fatalf("read of nothing: %+v %v", st, err)
	}
	w := Write{StateEpoch: 1, LeaderEpoch: 4, StartOffset: 10, Batches: []StateBatch{{10, 19, 2, 1}, {20, 20, 4, 5}}}
	if err := p.Write(ctx, key, w); err != nil {
		t.Fatal(err)
	}
	st, err = p.Read(ctx, key, 4)
	if err != nil || st.StartOffset != 10 || st.StateEpoch != 1 || len(st.Batches) != 2 || st.Batches[1] != (StateBatch{20, 20, 4, 5}) {
		t.Fatalf("read back: %+v %v", st, err)
	}
	if len(f.addrs) != 0 {
		t.Fatalf("a local coordinator was reached over the network: %v", f.addrs)
	}
	wr := f.seen[1].(*kmsg.WriteShareGroupStateRequest)
	if wr.GroupID != "g" || wr.Topics[0].TopicID != dataTopic || wr.Topics[0].Partitions[0].LeaderEpoch != 4 {
		t.Fatalf("write request: %+v", wr)
	}
}

func TestRemoteAndRetries(t *testing.T) {
	f := &fakeCoordinator{state: map[int32]State{}, codes: []int16{kerr.CoordinatorLoadInProgress.Code, kerr.NotCoordinator.Code}}
	p := newPersister(t, []int32{self, other}, f)
	key := Key{GroupID: "g", TopicID: dataTopic, Partition: 0}
	if err := p.Write(context.Background(), key, Write{StateEpoch: 1, StartOffset: 0}); err != nil {
		t.Fatal(err)
	}
	if len(f.seen) != 3 || len(f.addrs) != 3 || f.addrs[0] != "localhost:9092" {
		t.Fatalf("want 3 sends to broker 2, got %d (%v)", len(f.seen), f.addrs)
	}
}

func TestNonRetriableErrorIsReturned(t *testing.T) {
	f := &fakeCoordinator{state: map[int32]State{}, codes: []int16{kerr.FencedStateEpoch.Code}}
	p := newPersister(t, []int32{other, self}, f)
	err := p.Write(context.Background(), Key{GroupID: "g", TopicID: dataTopic}, Write{})
	if !errors.Is(err, kerr.FencedStateEpoch) || len(f.seen) != 1 {
		t.Fatalf("want FENCED_STATE_EPOCH after one send, got %v after %d", err, len(f.seen))
	}
}

func TestNoCoordinatorUntilDeadline(t *testing.T) {
	for name, leaders := range map[string][]int32{"no topic": nil, "no leader": {-1, -1}} {
		t.Run(name, func(t *testing.T) {
			f := &fakeCoordinator{state: map[int32]State{}}
			p := newPersister(t, leaders, f)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			_, err := p.Read(ctx, Key{GroupID: "g", TopicID: dataTopic}, 0)
			if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, kerr.CoordinatorNotAvailable) {
				t.Fatalf("want the deadline and COORDINATOR_NOT_AVAILABLE, got %v", err)
			}
			if len(f.seen) != 0 {
				t.Fatalf("sent %d requests with no coordinator", len(f.seen))
			}
		})
	}
}

func TestCoordinatorKey(t *testing.T) {
	id, err := kafka.ParseUUID("AAAAAAAAAAAAAAAAAAAAAQ")
	if err != nil {
		t.Fatal(err)
	}
	if got := (Key{GroupID: "orders", TopicID: id, Partition: 12}).CoordinatorKey(); got != "orders:AAAAAAAAAAAAAAAAAAAAAQ:12" {
		t.Fatalf("key %q", got)
	}
}
