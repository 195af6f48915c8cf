package nemesis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/testutil"
	"github.com/sluice-io/sluice/internal/verify/cluster"
	"github.com/sluice-io/sluice/internal/verify/history"
)

// resumeWithin is how soon after a fault is healed every partition must
// take an acks=all write again.
const resumeWithin = 30 * time.Second

// faultBinary is SLUICE_VERIFY_FAULT_BIN when set, else the tree's sluice
// built with -tags sluicefault (clock jumps need it).
func faultBinary(t *testing.T) string {
	if b := os.Getenv("SLUICE_VERIFY_FAULT_BIN"); b != "" {
		return b
	}
	bin := filepath.Join(t.TempDir(), "sluice-fault")
	out, err := exec.Command("go", "build", "-tags", "sluicefault", "-o", bin, "github.com/sluice-io/sluice/cmd/sluice").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -tags sluicefault: %v\n%s", err, out)
	}
	return bin
}

// ackLog is every ack's time since the history started, by partition.
type ackLog struct {
	start time.Time
	mu    sync.Mutex
	acks  map[int32][]time.Duration
}

func (a *ackLog) add(p int32) {
	a.mu.Lock()
	a.acks[p] = append(a.acks[p], time.Since(a.start))
	a.mu.Unlock()
}

// firstAfter is partition p's first ack after t, or -1.
func (a *ackLog) firstAfter(p int32, t time.Duration) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, at := range a.acks[p] {
		if at > t {
			return at
		}
	}
	return -1
}

// produce writes to every partition with acks=all until ctx ends.
func produce(ctx context.Context, t *testing.T, brokers []string, topic string, partitions int32, acks *ackLog) <-chan struct{} {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordDeliveryTimeout(60*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cl.Close()
		for i := 0; ctx.Err() == nil; i++ {
			r := &kgo.Record{Partition: int32(i) % partitions, Value: fmt.Appendf(nil, "v-%d", i)}
			cl.Produce(ctx, r, func(r *kgo.Record, err error) {
				if err == nil {
					acks.add(r.Partition)
				}
			})
			sleep(ctx, 5*time.Millisecond)
		}
	}()
	return done
}

// seedCovering finds a seed whose first count faults draw every kind,
// from SLUICE_NEMESIS_SEED on (default 1) to try other schedules by hand.
func seedCovering(kinds []Kind, nodes []int32, count int) int64 {
	from, err := strconv.ParseInt(os.Getenv("SLUICE_NEMESIS_SEED"), 10, 64)
	if err != nil {
		from = 1
	}
	for seed := from; ; seed++ {
		r := rand64(seed)
		seen := map[Kind]bool{}
		for range count {
			seen[plan(r, kinds, nodes, time.Second).kind] = true
		}
		if len(seen) == len(kinds) {
			return seed
		}
	}
}

func TestNemesisOnRealProcesses(t *testing.T) {
	// Real processes under a fault schedule: make test runs this after the
	// parallel package tests, alone with test/faults (SLUICE_REAL_PROCESS_TESTS=1),
	// so the machine's load is not what it measures.
	if testing.Short() || os.Getenv("SLUICE_REAL_PROCESS_TESTS") == "" {
		t.Skip("starts 3 sluice processes; set SLUICE_REAL_PROCESS_TESTS=1")
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := cluster.Start(context.Background(), cluster.Options{Binary: faultBinary(t), Dir: t.TempDir(), Log: log,
		Overrides: map[string]string{
			"broker.session.timeout.ms":            "3000",
			"broker.heartbeat.interval.ms":         "500",
			"replica.lag.time.max.ms":              "2000",
			"min.insync.replicas":                  "2",
			"offsets.topic.num.partitions":         "3",
			"transaction.state.log.num.partitions": "3",
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		if t.Failed() {
			for _, id := range c.Nodes() {
				t.Logf("node %d's log: %s", id, c.LogPath(id))
			}
		}
	}()
	kinds := Supported(c)
	if !slices.Equal(kinds, Kinds) {
		t.Fatalf("a 3-node fault build supports %v, want %v", kinds, Kinds)
	}
	const topic, partitions = "nemesis-test", 3
	count := 20
	if n, err := strconv.Atoi(os.Getenv("SLUICE_NEMESIS_COUNT")); err == nil && n > 0 {
		count = n // a longer run by hand
	}
	createTopic(t, c.BootstrapServers(), topic, partitions)

	rec := history.NewRecorder(time.Now, nil)
	acks := &ackLog{start: rec.Start(), acks: map[int32][]time.Duration{}}
	pctx, stopProducing := context.WithCancel(context.Background())
	produced := produce(pctx, t, c.BootstrapServers(), topic, partitions, acks)
	defer func() { stopProducing(); <-produced }()

	seed := seedCovering(kinds, c.Nodes(), count)
	nemLog := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	nem := New(c, topic, Schedule{Seed: seed, Interval: 300 * time.Millisecond, Hold: 1500 * time.Millisecond, Count: count}, rec, nemLog)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(count)*20*time.Second)
	defer cancel()
	if err := nem.Run(ctx); err != nil {
		t.Fatal(err)
	}
	ops := rec.Ops()
	checkPairs(t, ops, nem.Counts(), count, kinds)
	// Every partition takes writes again after each fault.
	for _, op := range ops {
		if op.Kind != history.FaultEnd {
			continue
		}
		for p := range int32(partitions) {
			testutil.Eventually(t, resumeWithin, func() bool { return acks.firstAfter(p, op.Time) >= 0 },
				"partition %d acked nothing within %s after %s ended", p, resumeWithin, op.Fault)
			if at := acks.firstAfter(p, op.Time); at-op.Time > resumeWithin {
				t.Errorf("partition %d: first ack %s after %s (of nodes %v) ended", p, at-op.Time, op.Fault, op.Nodes)
			}
		}
	}
	for i := 0; i+1 < len(ops); i += 2 {
		t.Logf("%s %v: %s (%s)", ops[i].Fault, ops[i].Nodes, (ops[i+1].Time - ops[i].Time).Round(time.Millisecond), ops[i].Detail)
	}
	t.Logf("seed %d: faults %v in %s", seed, nem.Counts(), time.Since(rec.Start()).Round(time.Second))

	// The same cluster seen only through its brokers (sluice verify
	// --brokers): the admin faults alone.
	ext := External(c.BootstrapServers())
	extKinds := Supported(ext)
	extRec := history.NewRecorder(time.Now, nil)
	extNem := New(ext, topic, Schedule{Seed: seedCovering(extKinds, nil, 4), Interval: 200 * time.Millisecond,
		Hold: 500 * time.Millisecond, Count: 4}, extRec, nemLog)
	if err := extNem.Run(ctx); err != nil {
		t.Fatal(err)
	}
	checkPairs(t, extRec.Ops(), extNem.Counts(), 4, extKinds)
	t.Logf("external: faults %v", extNem.Counts())
}

// checkPairs: each FaultStart is followed by its FaultEnd, without error,
// and the counts agree with the history and cover every kind.
func checkPairs(t *testing.T, ops []history.Op, counts map[Kind]int, count int, kinds []Kind) {
	t.Helper()
	if len(ops) != 2*count {
		t.Fatalf("%d fault ops for %d faults", len(ops), count)
	}
	seen := map[Kind]int{}
	for i := 0; i < len(ops); i += 2 {
		s, e := ops[i], ops[i+1]
		if s.Kind != history.FaultStart || e.Kind != history.FaultEnd || s.Fault != e.Fault || !slices.Equal(s.Nodes, e.Nodes) {
			t.Errorf("ops %d, %d are no start and end of one fault: %s / %s", i, i+1, s, e)
		}
		if e.Err != "" {
			t.Errorf("fault %s (%s) ended with %s", s.Fault, s.Detail, e.Err)
		}
		seen[Kind(s.Fault)]++
	}
	for _, k := range kinds {
		if seen[k] == 0 || counts[k] != seen[k] {
			t.Errorf("%s: %d in the history, counted %d", k, seen[k], counts[k])
		}
	}
}

func createTopic(t *testing.T, brokers []string, topic string, partitions int32) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
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
}
