package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/testutil"
)

// benchClientOpts make a franz-go client react to a leader change as fast
// as the brokers allow: a constant 50 ms retry backoff and metadata that
// may be refreshed every 100 ms (kgo's defaults back off up to a second
// and keep metadata at least 5 s), so the failover figures measure the
// brokers, not the client's pacing.
func benchClientOpts(addrs []string) []kgo.Opt {
	return []kgo.Opt{
		kgo.SeedBrokers(addrs...),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
		kgo.MetadataMinAge(100 * time.Millisecond),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
	}
}

// benchAdmin is an admin client over every broker address, closed at the
// end of the benchmark.
func benchAdmin(b *testing.B, addrs []string) *kadm.Client {
	b.Helper()
	cl, err := kgo.NewClient(benchClientOpts(addrs)...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// createBenchTopic creates topic (retrying while the cluster settles) with
// the given partitions, replication factor and topic configs.
func createBenchTopic(b *testing.B, adm *kadm.Client, topic string, partitions int32, rf int16, configs map[string]*string) {
	b.Helper()
	testutil.EventuallyNoError(b, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := adm.CreateTopic(ctx, partitions, rf, configs, topic)
		if err != nil {
			return err
		}
		if resp.Err != nil && !errors.Is(resp.Err, kerr.TopicAlreadyExists) {
			return resp.Err
		}
		return nil
	}, "create topic %s", topic)
}

// partitionDetails reads topic's partitions from Metadata.
func partitionDetails(adm *kadm.Client, topic string) (map[int32]kadm.PartitionDetail, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return nil, err
	}
	td, ok := md.Topics[topic]
	if !ok {
		return nil, fmt.Errorf("topic %s missing from metadata", topic)
	}
	if td.Err != nil {
		return nil, fmt.Errorf("topic %s: %w", topic, td.Err)
	}
	return td.Partitions, nil
}

// brokerViews asks each broker alone for topic's partitions: brokers
// apply metadata at their own pace, so their answers may differ.
func brokerViews(addrs []string, topic string) ([]map[int32]kadm.PartitionDetail, error) {
	var views []map[int32]kadm.PartitionDetail
	for _, addr := range addrs {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
		if err != nil {
			return nil, err
		}
		// Metadata goes to the seed broker while the client knows no other.
		parts, err := partitionDetails(kadm.NewClient(cl), topic)
		cl.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", addr, err)
		}
		views = append(views, parts)
	}
	return views, nil
}

// agreedLeaders returns topic's partitions when every broker names the
// same leader and leader epoch for each, every partition is led and has
// replicas in-sync replicas.
func agreedLeaders(addrs []string, topic string, replicas int) (map[int32]kadm.PartitionDetail, bool) {
	views, err := brokerViews(addrs, topic)
	if err != nil || len(views) == 0 || !fullISR(views[0], replicas) {
		return nil, false
	}
	for _, v := range views[1:] {
		if len(v) != len(views[0]) {
			return nil, false
		}
		for p, d := range views[0] {
			if v[p].Leader != d.Leader || v[p].LeaderEpoch != d.LeaderEpoch {
				return nil, false
			}
		}
	}
	return views[0], true
}

// leaderViews describes each broker's view of partition's leader, epoch
// and ISR, for failure messages.
func leaderViews(addrs []string, topic string, partition int32) string {
	views, err := brokerViews(addrs, topic)
	if err != nil {
		return err.Error()
	}
	var out []string
	for i, v := range views {
		p := v[partition]
		out = append(out, fmt.Sprintf("%s: leader %d epoch %d isr %v", addrs[i], p.Leader, p.LeaderEpoch, p.ISR))
	}
	return strings.Join(out, "; ")
}

// awaitFullISR waits until every partition of topic has a leader and
// replicas in-sync replicas.
func awaitFullISR(b *testing.B, adm *kadm.Client, topic string, replicas int, timeout time.Duration) map[int32]kadm.PartitionDetail {
	b.Helper()
	var parts map[int32]kadm.PartitionDetail
	testutil.EventuallyNoError(b, timeout, func() error {
		var err error
		if parts, err = partitionDetails(adm, topic); err != nil {
			return err
		}
		if !fullISR(parts, replicas) {
			return fmt.Errorf("partitions %+v", parts)
		}
		return nil
	}, "topic %s: every partition led with %d in-sync replicas", topic, replicas)
	return parts
}

func fullISR(parts map[int32]kadm.PartitionDetail, replicas int) bool {
	if len(parts) == 0 {
		return false
	}
	for _, p := range parts {
		if p.Err != nil || p.Leader < 0 || len(p.ISR) < replicas {
			return false
		}
	}
	return true
}

// leaderWatch is a franz-go hook that notes the first produce batch a
// broker other than the old leader acknowledged after it was armed: the
// first record acknowledged on the new leader.
type leaderWatch struct {
	mu        sync.Mutex
	oldLeader int32
	armed     bool
	at        time.Time
	fired     chan struct{}
	// acked is closed at the first batch acknowledged at all, so a round
	// starts only once the producer runs.
	acked     chan struct{}
	ackedOnce sync.Once
	// last is the broker that acknowledged the latest batch, of batches
	// acknowledged so far.
	last    int32
	batches int
}

func newLeaderWatch() *leaderWatch {
	return &leaderWatch{fired: make(chan struct{}), acked: make(chan struct{})}
}

// arm starts watching for a batch acknowledged by a broker other than old.
func (w *leaderWatch) arm(old int32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.oldLeader, w.armed = old, true
}

// OnProduceBatchWritten implements kgo.HookProduceBatchWritten.
func (w *leaderWatch) OnProduceBatchWritten(meta kgo.BrokerMetadata, _ string, _ int32, _ kgo.ProduceBatchMetrics) {
	now := time.Now()
	w.ackedOnce.Do(func() { close(w.acked) })
	w.mu.Lock()
	defer w.mu.Unlock()
	w.last = meta.NodeID
	w.batches++
	if w.armed && meta.NodeID != w.oldLeader && w.at.IsZero() {
		w.at = now
		close(w.fired)
	}
}

// pacedProducer writes one small record to one partition every
// millisecond, acks=all and idempotent (kgo's defaults), until stopped.
type pacedProducer struct {
	cl     *kgo.Client
	watch  *leaderWatch
	cancel context.CancelFunc
	done   chan struct{}
}

func startPacedProducer(b *testing.B, addrs []string, topic string, partition int32) *pacedProducer {
	b.Helper()
	watch := newLeaderWatch()
	opts := append(benchClientOpts(addrs),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.WithHooks(watch),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &pacedProducer{cl: cl, watch: watch, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		value := make([]byte, 100)
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			r := &kgo.Record{Topic: topic, Partition: partition, Value: value, Key: []byte(strconv.Itoa(i))}
			// Failures are only the cancellation at stop: an idempotent
			// producer retries everything else without limit.
			cl.Produce(ctx, r, nil)
		}
	}()
	select {
	case <-watch.acked:
	case <-time.After(30 * time.Second):
		p.stop()
		b.Fatalf("no record acknowledged on %s-%d within 30s", topic, partition)
	}
	return p
}

// lastBroker is the broker that acknowledged the latest batch, and how
// many batches were acknowledged so far.
func (p *pacedProducer) lastBroker() (broker int32, batches int) {
	p.watch.mu.Lock()
	defer p.watch.mu.Unlock()
	return p.watch.last, p.watch.batches
}

func (p *pacedProducer) stop() {
	p.cancel()
	<-p.done
	p.cl.Close()
}

// awaitNewLeaderAck waits until a record is acknowledged by a broker other
// than the one armed and returns when that happened.
func (p *pacedProducer) awaitNewLeaderAck(timeout time.Duration) (time.Time, error) {
	select {
	case <-p.watch.fired:
		p.watch.mu.Lock()
		defer p.watch.mu.Unlock()
		return p.watch.at, nil
	case <-time.After(timeout):
		return time.Time{}, fmt.Errorf("no record acknowledged by a new leader within %s", timeout)
	}
}

// median of samples (sorted in place).
func median(samples []time.Duration) time.Duration {
	slices.Sort(samples)
	return samples[len(samples)/2]
}

// envInt reads a positive integer from the environment, or def.
func envInt(b *testing.B, name string, def int) int {
	b.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}

// logLoadAverage logs /proc/loadavg, so a figure can be read against how
// busy the shared machine was.
func logLoadAverage(b *testing.B, when string) {
	b.Helper()
	la, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		b.Logf("load average %s: %v", when, err)
		return
	}
	b.Logf("load average %s: %s", when, la)
}

// sequentialWriteRate measures the file system under dir as bench/storage
// does for its "1 MiB write, one fsync at the end" figure: mb MiB written
// in 1 MiB buffered writes, then one fdatasync, in MB/s (10^6 bytes). A
// 64 MiB warm-up write first is not counted (the first touch of guest
// memory is slow in this VM). The file is removed afterwards.
func sequentialWriteRate(dir string, mb int) (float64, error) {
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i*7 + 1)
	}
	write := func(name string, n int) (time.Duration, error) {
		path := filepath.Join(dir, name)
		defer os.Remove(path)
		f, err := os.Create(path)
		if err != nil {
			return 0, fmt.Errorf("create %s: %w", path, err)
		}
		defer f.Close()
		start := time.Now()
		for range n {
			if _, err := f.Write(buf); err != nil {
				return 0, fmt.Errorf("write %s: %w", path, err)
			}
		}
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			return 0, fmt.Errorf("fdatasync %s: %w", path, err)
		}
		return time.Since(start), nil
	}
	if _, err := write("warm-up.bin", 64); err != nil {
		return 0, err
	}
	elapsed, err := write("seq-write.bin", mb)
	if err != nil {
		return 0, err
	}
	return float64(mb) * (1 << 20) / 1e6 / elapsed.Seconds(), nil
}

// partitionLogBytes sums the sizes of the segment files (*.log) of a
// partition directory.
func partitionLogBytes(dir string) (int64, error) {
	matches, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		return 0, err
	}
	var total int64
	for _, m := range matches {
		fi, err := os.Stat(m)
		if err != nil {
			return 0, err
		}
		total += fi.Size()
	}
	return total, nil
}
