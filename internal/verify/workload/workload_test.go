package workload

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/testcluster"
	"github.com/sluice-io/sluice/internal/verify/history"
)

// groupOverrides make group membership changes take seconds, not the
// defaults' tens of seconds: no initial rebalance delay, short sessions
// for both protocols.
var groupOverrides = map[string]string{
	"group.initial.rebalance.delay.ms":         "0",
	"group.min.session.timeout.ms":             "1000",
	"group.consumer.session.timeout.ms":        "4000",
	"group.consumer.min.session.timeout.ms":    "1000",
	"group.consumer.heartbeat.interval.ms":     "500",
	"group.consumer.min.heartbeat.interval.ms": "500",
}

func testLogger(t *testing.T) *slog.Logger {
	if os.Getenv("WORKLOAD_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func startCluster(t *testing.T, nodes int) *testcluster.Cluster {
	return testcluster.Start(t, testcluster.Options{Nodes: nodes, Overrides: groupOverrides})
}

func testConfig(c *testcluster.Cluster, t *testing.T, topic string) Config {
	return Config{
		Brokers:        c.RunningBrokerAddrs(),
		Topic:          topic,
		Partitions:     4,
		Rate:           200,
		SessionTimeout: 4 * time.Second,
		DrainTimeout:   10 * time.Second,
		Log:            testLogger(t),
	}
}

// runFor runs fn with a context that ends after d.
func runFor(t *testing.T, d time.Duration, fn func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if err := fn(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestQueueThenFinalReadReadsEveryAckOnce(t *testing.T) {
	c := startCluster(t, 3)
	cfg := testConfig(c, t, "queue")
	cfg.MinInsyncReplicas = 2
	rec := history.NewRecorder(time.Now, nil)
	runFor(t, 20*time.Second, func(ctx context.Context) error { return CreateTopic(ctx, cfg) })
	runFor(t, 4*time.Second, func(ctx context.Context) error { return Queue(ctx, cfg, rec) })
	runFor(t, 20*time.Second, func(ctx context.Context) error { return FinalRead(ctx, cfg, rec) })

	ops := rec.Ops()
	s := summarize(t, ops)
	checkSendsEnd(t, s)
	checkFinalReadsAcks(t, s)
	if s.acks < 300 {
		t.Errorf("only %d acks in 4 s at 200/s", s.acks)
	}
	if len(s.finals) != int(cfg.Partitions) {
		t.Errorf("final ops for %d partitions, want %d", len(s.finals), cfg.Partitions)
	}
	if s.polls["consumer-1"]+s.polls["consumer-2"] == 0 || s.kinds[history.Commit] == 0 || s.kinds[history.Assign] == 0 {
		t.Errorf("group consumers: polls %v, commits %d, assigns %d", s.polls, s.kinds[history.Commit], s.kinds[history.Assign])
	}
	t.Logf("ops by kind: %v; polls by process: %v; ack latency %s", s.kinds, s.polls, ackLatency(ops))
}

// ackLatency describes the acks' latencies: "p50 3ms p99 9ms max 12ms".
func ackLatency(ops []history.Op) string {
	var ls []time.Duration
	for _, op := range ops {
		if op.Kind == history.Ack {
			ls = append(ls, op.Latency)
		}
	}
	if len(ls) == 0 {
		return "(no acks)"
	}
	slices.Sort(ls)
	q := func(f float64) time.Duration { return ls[int(f*float64(len(ls)-1))] }
	return fmt.Sprintf("p50 %s p99 %s max %s", q(0.5), q(0.99), ls[len(ls)-1])
}

func TestGroupChurnRecordsGenerations(t *testing.T) {
	c := startCluster(t, 1)
	cfg := testConfig(c, t, "group")
	cfg.Rate = 100
	cfg.ChurnInterval = 700 * time.Millisecond
	cfg.Seed = 7
	rec := history.NewRecorder(time.Now, nil)
	runFor(t, 20*time.Second, func(ctx context.Context) error { return CreateTopic(ctx, cfg) })
	runFor(t, 8*time.Second, func(ctx context.Context) error { return Group(ctx, cfg, rec) })
	runFor(t, 20*time.Second, func(ctx context.Context) error { return FinalRead(ctx, cfg, rec) })

	ops := rec.Ops()
	s := summarize(t, ops)
	checkSendsEnd(t, s)
	checkFinalReadsAcks(t, s)
	gens := map[string]map[int32]bool{}
	for _, op := range ops {
		if op.Kind != history.Assign {
			continue
		}
		proto := "classic"
		if strings.Contains(op.Detail, "(consumer protocol)") {
			proto = "consumer"
		}
		if gens[proto] == nil {
			gens[proto] = map[int32]bool{}
		}
		gens[proto][op.Generation] = true
	}
	if len(gens["classic"]) < 2 || len(gens["consumer"]) < 2 {
		t.Errorf("assignments from too few generations/epochs: %v", gens)
	}
	members := 0
	for p := range s.polls {
		if p != finalProcess {
			members++
		}
	}
	if members < 3 {
		t.Errorf("only %d members polled: %v", members, s.polls)
	}
	t.Logf("ops by kind: %v; generations: %v; polls: %v", s.kinds, gens, s.polls)
}

func TestCancelEndsEverySend(t *testing.T) {
	c := startCluster(t, 1)
	cfg := testConfig(c, t, "cancel")
	cfg.Consumers = 1
	cfg.DrainTimeout = 2 * time.Second
	rec := history.NewRecorder(time.Now, nil)
	runFor(t, 20*time.Second, func(ctx context.Context) error { return CreateTopic(ctx, cfg) })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Queue(ctx, cfg, rec) }()
	time.Sleep(1500 * time.Millisecond)
	// With the only broker gone, the sends under way can end neither in
	// an ack nor in a failure before the drain gives up on them.
	c.Stop(0)
	time.Sleep(500 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(25 * time.Second):
		t.Fatal("Queue did not return 25 s after its context ended")
	}
	s := summarize(t, rec.Ops())
	checkSendsEnd(t, s)
	if s.acks == 0 || s.kinds[history.Info] == 0 {
		t.Errorf("want acks before the stop and infos after it: %v", s.kinds)
	}
}

// summary is what the local checks need from a history.
type summary struct {
	kinds map[history.Kind]int
	polls map[string]int
	// sends and outcomes by value.
	sends    map[string]history.Op
	outcomes map[string][]history.Op
	acks     int
	// finals: partition -> high watermark; finalReads: value -> reads.
	finals     map[int32]int64
	finalReads map[string][]history.Op
}

func summarize(t *testing.T, ops []history.Op) summary {
	s := summary{kinds: map[history.Kind]int{}, polls: map[string]int{}, sends: map[string]history.Op{},
		outcomes: map[string][]history.Op{}, finals: map[int32]int64{}, finalReads: map[string][]history.Op{}}
	for _, op := range ops {
		s.kinds[op.Kind]++
		switch op.Kind {
		case history.Send:
			if _, dup := s.sends[op.Value]; dup {
				t.Errorf("value %s sent twice", op.Value)
			}
			s.sends[op.Value] = op
		case history.Ack, history.Fail, history.Info:
			if _, sent := s.sends[op.Value]; !sent {
				t.Errorf("%s of %s before or without its send", op.Kind, op.Value)
			}
			s.outcomes[op.Value] = append(s.outcomes[op.Value], op)
			if op.Kind == history.Ack {
				s.acks++
			}
		case history.Poll:
			s.polls[op.Process]++
			if op.Process == finalProcess {
				s.finalReads[op.Value] = append(s.finalReads[op.Value], op)
			}
		case history.Final:
			s.finals[op.Partition] = op.Offset
		}
	}
	return s
}

// checkSendsEnd: every send ends in exactly one Ack, Fail or Info.
func checkSendsEnd(t *testing.T, s summary) {
	t.Helper()
	for v := range s.sends {
		if n := len(s.outcomes[v]); n != 1 {
			t.Errorf("send of %s has %d outcomes: %v", v, n, s.outcomes[v])
		}
	}
}

// checkFinalReadsAcks: the final reader read every acknowledged value
// exactly once, at the partition and offset of its ack, and below the
// partition's high watermark.
func checkFinalReadsAcks(t *testing.T, s summary) {
	t.Helper()
	for v, outs := range s.outcomes {
		if len(outs) != 1 || outs[0].Kind != history.Ack {
			continue
		}
		ack := outs[0]
		reads := s.finalReads[v]
		if len(reads) != 1 {
			t.Errorf("acked %s (p%d@%d) read %d times by the final reader", v, ack.Partition, ack.Offset, len(reads))
			continue
		}
		if r := reads[0]; r.Partition != ack.Partition || r.Offset != ack.Offset {
			t.Errorf("acked %s at p%d@%d, final read it at p%d@%d", v, ack.Partition, ack.Offset, r.Partition, r.Offset)
		}
	}
	for v, reads := range s.finalReads {
		if len(reads) > 1 {
			t.Errorf("final reader read %s %d times", v, len(reads))
		}
		if hw, ok := s.finals[reads[0].Partition]; !ok || reads[0].Offset >= hw {
			t.Errorf("final read of %s at p%d@%d, high watermark %v", v, reads[0].Partition, reads[0].Offset, fmt.Sprint(hw))
		}
	}
}

// FinalRead names the partitions it could not read while the cluster is
// down, and retries until it can once the cluster is back.
func TestFinalReadRetriesAndNamesUnfinished(t *testing.T) {
	c := startCluster(t, 1)
	cfg := testConfig(c, t, "final")
	cfg.Partitions = 2
	rec := history.NewRecorder(time.Now, nil)
	runFor(t, 20*time.Second, func(ctx context.Context) error { return CreateTopic(ctx, cfg) })
	p, err := NewProducer(cfg, "producer-1", rec)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		p.Send(int32(i % 2))
	}
	p.Drain(10 * time.Second)
	c.Stop(0)

	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	err = FinalRead(ctx, cfg, history.NewRecorder(time.Now, nil))
	cancel()
	if err == nil || !strings.Contains(err.Error(), "partitions [0 1]") {
		t.Fatalf("final read with the cluster down: %v, want an error naming partitions [0 1]", err)
	}

	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
		defer cancel()
		done <- FinalRead(ctx, cfg, rec)
	}()
	time.Sleep(time.Second)
	c.Restart(0)
	if err := <-done; err != nil {
		t.Fatalf("final read across a restart: %v", err)
	}
	s := summarize(t, rec.Ops())
	checkSendsEnd(t, s)
	checkFinalReadsAcks(t, s)
	if s.acks != 10 || len(s.finalReads) != 10 {
		t.Errorf("%d acks, %d values read back, want 10 and 10", s.acks, len(s.finalReads))
	}
}
