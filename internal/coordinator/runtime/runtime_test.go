package runtime

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/coordinator/runtime/runtimetest"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/testutil"
)

const (
	testNode  int32 = 1
	testTopic       = "__kv_state"
)

// kvShard is a minimal state machine: a map whose puts are written before
// they are applied and answered, and waiters parked until Shutdown. A
// transactional put waits in pending until its producer's marker.
type kvShard struct {
	// epoch is the leader epoch NewShard was given.
	epoch   int32
	kv      map[string]string
	pending map[int64]map[string]string
	writes  []Write
	parked  []func(string)
	// replayed lists what Replay saw, one line a call.
	replayed []string
	// shutdowns receives Shutdown's code; ticks, when set, Tick's time.
	shutdowns chan<- int16
	ticks     chan<- time.Time
}

func (s *kvShard) Replay(_ time.Time, b ReplayBatch, offset int64, key, value []byte) error {
	s.replayed = append(s.replayed, fmt.Sprintf("%d %+v %s=%s", offset, b, key, value))
	switch {
	case b.Control:
		s.endTxn(b.ProducerID, b.Commit)
	case string(key) == "bad":
		return errors.New("undecodable")
	case b.Transactional:
		s.putPending(b.ProducerID, string(key), string(value))
	default:
		s.kv[string(key)] = string(value)
	}
	return nil
}

func (s *kvShard) putPending(producer int64, k, v string) {
	if s.pending[producer] == nil {
		s.pending[producer] = map[string]string{}
	}
	s.pending[producer][k] = v
}

// endTxn applies (commit) or drops the producer's pending puts.
func (s *kvShard) endTxn(producer int64, commit bool) {
	if commit {
		maps.Copy(s.kv, s.pending[producer])
	}
	delete(s.pending, producer)
}

func (s *kvShard) Loaded(time.Time) []any { return []any{"keys", len(s.kv)} }
func (s *kvShard) Tick(now time.Time) {
	if s.ticks != nil {
		select {
		case s.ticks <- now:
		default:
		}
	}
}
func (s *kvShard) NextTick(tick time.Duration) time.Duration { return tick }
func (s *kvShard) Shutdown(code int16) {
	s.shutdowns <- code
	for _, p := range s.parked {
		p("stopped")
	}
}

func (s *kvShard) TakeWrites() []Write {
	w := s.writes
	s.writes = nil
	return w
}

// put writes k=v and applies it once durable; reply gets the write's error.
func (s *kvShard) put(k, v string, reply func(error)) {
	s.writes = append(s.writes, Write{Records: []Record{{Key: []byte(k), Value: []byte(v)}}, Done: func(err error) {
		if err == nil {
			s.kv[k] = v
		}
		reply(err)
	}})
}

// kvImage is an image with testTopic of n partitions led by leader at epoch.
func kvImage(t *testing.T, n, leader, epoch int32) *metadata.Image {
	t.Helper()
	d := metadata.NewDelta(metadata.EmptyImage())
	id := kafka.UUID{9}
	recs := []metadata.Record{
		&metadata.RegisterBrokerRecord{BrokerID: testNode, BrokerEpoch: 1, Endpoints: []metadata.Endpoint{{Name: "PLAINTEXT", Host: "localhost", Port: 9092}}},
		&metadata.TopicRecord{Name: testTopic, TopicID: id},
	}
	for p := range n {
		recs = append(recs, &metadata.PartitionRecord{TopicID: id, Partition: p, Replicas: []int32{testNode}, ISR: []int32{testNode}, Leader: leader, LeaderEpoch: epoch})
	}
	for i, r := range recs {
		if err := d.Replay(int64(i), 1, r); err != nil {
			t.Fatalf("replay: %v", err)
		}
	}
	return d.Apply()
}

// gatedLog fails every Read until open is closed: the shard stays loading.
type gatedLog struct {
	*runtimetest.MemLog
	open chan struct{}
}

func (l gatedLog) Read(ctx context.Context, p int32, off int64, max int32) ([]byte, int64, error) {
	select {
	case <-l.open:
		return l.MemLog.Read(ctx, p, off, max)
	default:
		return nil, 0, errors.New("not the leader yet")
	}
}

// newKVRuntime returns a runtime of kvShards and the channel of their
// Shutdown codes.
func newKVRuntime(t *testing.T, w PartitionWriter) (*Runtime[*kvShard], <-chan int16) {
	return newKVRuntimeOn(t, w, nil, time.Millisecond, nil)
}

// newKVRuntimeOn is newKVRuntime on clk (nil: real) with a tick interval,
// Tick's times sent to ticks when set.
func newKVRuntimeOn(t *testing.T, w PartitionWriter, clk clock.Clock, tick time.Duration, ticks chan<- time.Time) (*Runtime[*kvShard], <-chan int16) {
	t.Helper()
	shutdowns := make(chan int16, 100)
	r, err := New(Options[*kvShard]{
		Name: "kv coordinator", Topic: testTopic, NodeID: testNode,
		NewShard: func(_, epoch int32, _ time.Time) *kvShard {
			return &kvShard{epoch: epoch, kv: map[string]string{}, pending: map[int64]map[string]string{}, shutdowns: shutdowns, ticks: ticks}
		},
		NumPartitions: 2, ReplicationFactor: 1, Writer: w, TickInterval: tick, Clock: clk,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r, shutdowns
}

func get(ctx context.Context, r *Runtime[*kvShard], p int32, k string) (string, int16) {
	return Call(ctx, r, p, func(_ time.Time, s *kvShard, reply func(string)) { reply(s.kv[k]) })
}

func put(ctx context.Context, r *Runtime[*kvShard], p int32, k, v string) (error, int16) {
	return Call(ctx, r, p, func(_ time.Time, s *kvShard, reply func(error)) { s.put(k, v, reply) })
}

// waitServing retries until partition p's shard has loaded.
func waitServing(t *testing.T, r *Runtime[*kvShard], p int32) {
	t.Helper()
	testutil.Eventually(t, 5*time.Second, func() bool {
		_, code := get(context.Background(), r, p, "")
		return code == 0
	}, "shard %d loaded", p)
}

// TestRuntimeLoadWriteReload: a shard answers NOT_COORDINATOR before it
// runs and COORDINATOR_LOAD_IN_PROGRESS while its partition is unreadable;
// it then replays (skipping what its Shard refuses), answers after durable
// writes, and a new leader epoch reloads what the old shard wrote.
func TestRuntimeLoadWriteReload(t *testing.T) {
	ctx := context.Background()
	log := runtimetest.NewMemLog()
	open := make(chan struct{})
	r, _ := newKVRuntime(t, gatedLog{log, open})
	if _, code := get(ctx, r, 0, "a"); code != kerr.NotCoordinator.Code {
		t.Fatalf("before the image: %v", kerr.ErrorForCode(code))
	}
	// Records already in partition 0, one of them refused by the Shard.
	pre, _ := newKVRuntime(t, log)
	pre.ApplyImage(kvImage(t, 2, testNode, 0))
	waitServing(t, pre, 0)
	for _, kv := range [][2]string{{"a", "1"}, {"bad", "x"}, {"b", "2"}} {
		if err, code := put(ctx, pre, 0, kv[0], kv[1]); err != nil || code != 0 {
			t.Fatalf("put %v: %v %v", kv, err, kerr.ErrorForCode(code))
		}
	}
	pre.Close()

	r.ApplyImage(kvImage(t, 2, testNode, 0))
	if _, code := get(ctx, r, 0, "a"); code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("while loading: %v", kerr.ErrorForCode(code))
	}
	close(open)
	waitServing(t, r, 0)
	if v, _ := get(ctx, r, 0, "b"); v != "2" {
		t.Fatalf("replayed b = %q", v)
	}
	if v, _ := get(ctx, r, 0, "bad"); v != "" {
		t.Fatalf("refused record applied: %q", v)
	}
	log.SetFail(kerr.NotEnoughReplicas)
	if err, _ := put(ctx, r, 0, "c", "3"); !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Fatalf("failed write: %v", err)
	}
	log.SetFail(nil)
	if err, _ := put(ctx, r, 0, "c", "4"); err != nil {
		t.Fatal(err)
	}
	r.ApplyImage(kvImage(t, 2, testNode, 1))
	if epoch, ok := r.LeaderEpoch(0); !ok || epoch != 1 {
		t.Fatalf("epoch %d %v after the new epoch", epoch, ok)
	}
	waitServing(t, r, 0)
	if epoch, _ := Call(ctx, r, 0, func(_ time.Time, s *kvShard, reply func(int32)) { reply(s.epoch) }); epoch != 1 {
		t.Fatalf("the reloaded shard was made for epoch %d, want 1", epoch)
	}
	if v, _ := get(ctx, r, 0, "c"); v != "4" {
		t.Fatalf("after reload c = %q", v)
	}
}

// TestRuntimeResignAnswersParked: losing the partition shuts the Shard
// down with NOT_COORDINATOR, which answers what it parked, and CallAll
// reaches only the shards still running.
func TestRuntimeResignAnswersParked(t *testing.T) {
	ctx := context.Background()
	r, shutdowns := newKVRuntime(t, runtimetest.NewMemLog())
	r.ApplyImage(kvImage(t, 2, testNode, 0))
	waitServing(t, r, 0)
	waitServing(t, r, 1)
	answers := CallAll(ctx, r, func(_ time.Time, _ *kvShard, reply func(bool)) { reply(true) })
	if len(answers) != 2 || !answers[0].Value || !answers[1].Value {
		t.Fatalf("CallAll: %+v", answers)
	}
	var wg sync.WaitGroup
	var parked string
	var code int16
	wg.Go(func() {
		parked, code = Call(ctx, r, 0, func(_ time.Time, s *kvShard, reply func(string)) {
			s.parked = append(s.parked, reply)
		})
	})
	// Wait until the call is parked in the shard.
	for n := 0; n == 0; {
		n, _ = Call(ctx, r, 0, func(_ time.Time, s *kvShard, reply func(int)) { reply(len(s.parked)) })
	}
	r.ApplyImage(kvImage(t, 2, 2, 1))
	wg.Wait()
	for range 2 {
		if got := <-shutdowns; got != kerr.NotCoordinator.Code {
			t.Fatalf("Shutdown(%v)", kerr.ErrorForCode(got))
		}
	}
	// The parked call has its Shutdown answer, unless the shard's stop
	// reached it first (NOT_COORDINATOR either way).
	if (parked != "stopped" || code != 0) && code != kerr.NotCoordinator.Code {
		t.Fatalf("parked call: %q %v", parked, kerr.ErrorForCode(code))
	}
	if answers := CallAll(ctx, r, func(_ time.Time, _ *kvShard, reply func(bool)) { reply(true) }); len(answers) != 0 {
		t.Fatalf("CallAll after resigning: %+v", answers)
	}
	if _, code := get(ctx, r, 1, ""); code != kerr.NotCoordinator.Code {
		t.Fatalf("after resigning: %v", kerr.ErrorForCode(code))
	}
}

// TestRuntimeTicksOnTheClock: an idle shard's timers fire when the injected
// clock passes them, with no operation to wake its loop.
func TestRuntimeTicksOnTheClock(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	clk := clock.NewManual(start)
	ticks := make(chan time.Time, 100)
	// An hour's interval: no real timer fires during the test.
	r, _ := newKVRuntimeOn(t, runtimetest.NewMemLog(), clk, time.Hour, ticks)
	r.ApplyImage(kvImage(t, 1, testNode, 0))
	waitServing(t, r, 0)
	// The rounds of operations so far ticked at start; only the loop's
	// timer can tick later, as no operation comes after the move.
	later := start.Add(2 * time.Hour)
	clk.Set(later)
	deadline := time.After(5 * time.Second)
	for {
		select {
		case now := <-ticks:
			if now.Equal(later) {
				return
			}
		case <-deadline:
			t.Fatal("no tick after the clock passed the shard's timer")
		}
	}
}
