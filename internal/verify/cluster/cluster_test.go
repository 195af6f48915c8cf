package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/testbin"
	"github.com/sluice-io/sluice/internal/testutil"
)

// faultOverrides make a 3-node cluster notice a dead, stopped or cut node
// within seconds (session 3 s, lag 2 s), so acks=all resumes quickly.
var faultOverrides = map[string]string{
	"broker.session.timeout.ms":            "3000",
	"broker.heartbeat.interval.ms":         "500",
	"replica.lag.time.max.ms":              "2000",
	"min.insync.replicas":                  "2",
	"default.replication.factor":           "3",
	"offsets.topic.num.partitions":         "3",
	"transaction.state.log.num.partitions": "3",
}

// binary is SLUICE_VERIFY_BIN when set (a binary built by hand), else the
// tree's sluice built once for the test process.
func binary(t *testing.T) string {
	if b := os.Getenv("SLUICE_VERIFY_BIN"); b != "" {
		return b
	}
	return testbin.Build(t)
}

// producer writes to every partition of a topic with acks=all
// (idempotent, franz-go's default) and counts each partition's acks.
type producer struct {
	cl   *kgo.Client
	mu   sync.Mutex
	acks map[int32]int
	errs int
	stop chan struct{}
	done chan struct{}
}

func startProducer(t *testing.T, brokers []string, topic string, partitions int32) *producer {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordDeliveryTimeout(60*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	p := &producer{cl: cl, acks: map[int32]int{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for i := 0; ; i++ {
			select {
			case <-p.stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			r := &kgo.Record{Partition: int32(i) % partitions, Value: fmt.Appendf(nil, "v-%d", i)}
			cl.Produce(context.Background(), r, func(r *kgo.Record, err error) {
				p.mu.Lock()
				defer p.mu.Unlock()
				if err != nil {
					p.errs++
					return
				}
				p.acks[r.Partition]++
			})
		}
	}()
	t.Cleanup(p.close)
	return p
}

func (p *producer) close() {
	select {
	case <-p.stop:
	default:
		close(p.stop)
		<-p.done
		p.cl.Close()
	}
}

func (p *producer) snapshot() map[int32]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[int32]int, len(p.acks))
	for k, v := range p.acks {
		out[k] = v
	}
	return out
}

// awaitProgress waits until every partition (all) or the partitions
// together got 10 more acks. During a fault only the total must grow: a
// leader isolated with its clients still reaching it holds its partition's
// produce until the client learns of the new leader from another broker.
func (p *producer) awaitProgress(t *testing.T, partitions int32, all bool, what string) {
	t.Helper()
	base := p.snapshot()
	testutil.EventuallyNoError(t, 45*time.Second, func() error {
		now := p.snapshot()
		total := 0
		for i := range partitions {
			if all && now[i] < base[i]+10 {
				return fmt.Errorf("partition %d: %d acks since, want 10", i, now[i]-base[i])
			}
			total += now[i] - base[i]
		}
		if total < 10 {
			return fmt.Errorf("%d acks since, want 10", total)
		}
		return nil
	}, "acks=all produce %s", what)
}

func createTopic(t *testing.T, brokers []string, topic string, partitions int32) *kadm.Client {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	adm := kadm.NewClient(cl)
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := adm.CreateTopic(ctx, partitions, 3, nil, topic)
		if err != nil || errors.Is(resp.Err, kerr.TopicAlreadyExists) {
			return err
		}
		return resp.Err
	}, "create topic %s", topic)
	return adm
}

// awaitFullISR waits until every partition of topic has 3 in-sync replicas.
func awaitFullISR(t *testing.T, adm *kadm.Client, topic string) {
	t.Helper()
	testutil.EventuallyNoError(t, 45*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		md, err := adm.Metadata(ctx, topic)
		if err != nil {
			return err
		}
		for _, p := range md.Topics[topic].Partitions {
			if len(p.ISR) != 3 {
				return fmt.Errorf("partition %d: isr %v", p.Partition, p.ISR)
			}
		}
		return nil
	}, "every ISR complete")
}

func TestClusterFaultsUnderAcksAllProduce(t *testing.T) {
	// Real processes under a fault schedule: make test runs this after the
	// parallel package tests, alone with test/faults (SLUICE_REAL_PROCESS_TESTS=1),
	// so the machine's load is not what it measures.
	if testing.Short() || os.Getenv("SLUICE_REAL_PROCESS_TESTS") == "" {
		t.Skip("starts 3 sluice processes; set SLUICE_REAL_PROCESS_TESTS=1")
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	dir := t.TempDir()
	c, err := Start(context.Background(), Options{Binary: binary(t), Dir: dir, Overrides: faultOverrides, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, id := range c.Nodes() {
				b, _ := os.ReadFile(c.LogPath(id))
				t.Logf("node %d log tail:\n%s", id, tail(b, 3000))
			}
		}
	})
	defer func() {
		if err := c.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	if got := len(c.BootstrapServers()); got != 3 {
		t.Fatalf("%d bootstrap servers", got)
	}
	const topic, partitions = "cluster-test", 3
	adm := createTopic(t, c.BootstrapServers(), topic, partitions)
	p := startProducer(t, c.BootstrapServers(), topic, partitions)
	p.awaitProgress(t, partitions, true, "to every partition at first")

	// Each fault must leave produce going on some partitions, and its
	// healing on all of them, with every ISR complete again.
	faults := []struct {
		what        string
		fault, heal func() error
	}{
		{"node 2 killed", func() error { return errors.Join(c.Kill(2), notRunning(c, 2)) }, func() error { return c.Restart(2) }},
		{"node 3 paused", func() error { return c.Pause(3) }, func() error { return c.Resume(3) }},
		{"node 1 isolated", func() error { return c.Isolate(1) }, c.HealAll},
		{"link 2<->3 cut", func() error { return c.CutLink(2, 3) }, c.HealAll},
		{"node 1 terminated", func() error { return c.Terminate(1) }, func() error { return c.Restart(1) }},
	}
	for _, f := range faults {
		if err := f.fault(); err != nil {
			t.Fatalf("%s: %v", f.what, err)
		}
		p.awaitProgress(t, partitions, false, "with "+f.what)
		if err := f.heal(); err != nil {
			t.Fatalf("healing %s: %v", f.what, err)
		}
		p.awaitProgress(t, partitions, true, "to every partition after "+f.what)
		awaitFullISR(t, adm, topic)
	}
	if !c.Running(2) {
		t.Error("node 2 not running after its restart")
	}

	for i := range c.members {
		if err := c.awaitReady(context.Background(), i); err != nil {
			t.Error(err)
		}
	}
	awaitFullISR(t, adm, topic)
	p.close()
	if err := c.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	for _, id := range c.Nodes() {
		if c.Running(id) {
			t.Errorf("node %d runs after Close", id)
		}
		if st, err := os.Stat(c.LogPath(id)); err != nil || st.Size() == 0 {
			t.Errorf("node %d's log %s: %v", id, c.LogPath(id), err)
		}
	}
	if c.ClockFaults() {
		t.Error("a plain build claims clock faults")
	}
}

func notRunning(c *Cluster, id int32) error {
	if c.Running(id) {
		return fmt.Errorf("node %d runs after Kill", id)
	}
	return nil
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
