package integration

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/testcluster"
)

// stabilityTopics are the CreateTopics a client sends at once: one request
// of 3,000 partitions and seven of 1,000, 10,000 partitions in all.
var stabilityTopics = []struct {
	name       string
	partitions int32
}{
	{"stable-big", 3000},
	{"stable-0", 1000}, {"stable-1", 1000}, {"stable-2", 1000}, {"stable-3", 1000},
	{"stable-4", 1000}, {"stable-5", 1000}, {"stable-6", 1000},
}

const (
	stabilityPartitions = 10000
	// stabilityRF is 1: at RF=3 every node would host 10,000 logs, each
	// holding its segment, offset index and time index open, 30,000 files
	// past this machine's limit of 20,000 per process (ulimit -n), and
	// partitions fail with KAFKA_STORAGE_ERROR whatever the Raft loop does.
	stabilityRF = 1
	// stabilitySampleEvery paces each node's DescribeQuorum.
	stabilitySampleEvery = 50 * time.Millisecond
)

// TestQuorumStableUnderLargeCreateTopics runs 3 combined nodes as processes
// with tight quorum timeouts (election 300 ms; fetch 600 ms, the 2:1 ratio
// of Kafka's defaults, as Kafka checks no relation between the two keys),
// creates 10,000 partitions (RF=1, see stabilityRF) through concurrent
// CreateTopics and waits until every node hosts the logs of all its
// replicas. From before the first CreateTopics to the end every voter is
// asked every 50 ms, on its own CONTROLLER listener, which leader it
// follows (the leader: and at which epoch); no answer may change, and every
// CreateTopics must succeed. The metadata work of a large creation (log
// directories and files on every broker) must not hold up the Raft loop so
// long that a follower loses its leader or the leader its quorum (issue 13).
func TestQuorumStableUnderLargeCreateTopics(t *testing.T) {
	c := testcluster.StartProcesses(t, binaryPath, testcluster.Options{Nodes: 3, Overrides: map[string]string{
		"controller.quorum.election.timeout.ms": "300",
		"controller.quorum.fetch.timeout.ms":    "600",
	}})
	s := startQuorumSampler(t, c.Layout)
	baseline := s.awaitAgreement(t, 30*time.Second)
	logStart := make([]int, len(c.Layout.Nodes))
	for i := range c.Layout.Nodes {
		logStart[i] = len(c.Logs(i))
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Layout.BrokerAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	start := time.Now()
	answers, createErr := createStabilityTopics(kadm.NewClient(cl), start)
	created := time.Since(start)
	t.Logf("CreateTopics of %d partitions (RF=%d) all answered after %s (%s)",
		stabilityPartitions, stabilityRF, created.Round(time.Millisecond), strings.Join(answers, ", "))
	var hostErr error
	if createErr == nil {
		hostErr = awaitAllHosted(cl, c.Layout, 120*time.Second)
		t.Logf("every node hosted its replicas %s after the first CreateTopics (err: %v)",
			time.Since(start).Round(time.Millisecond), hostErr)
	}
	events, samples := s.stop()
	t.Logf("%d DescribeQuorum samples, %d changes", samples, len(events))
	if lines := quorumLogLines(c, logStart); len(lines) > 0 {
		t.Logf("quorum and fencing lines the nodes logged after the baseline:\n%s", strings.Join(lines, "\n"))
	}
	var bad []string
	for _, e := range events {
		if e.err != nil || e.view != baseline[e.node] {
			bad = append(bad, e.String(start))
		}
	}
	if len(bad) > 0 {
		t.Errorf("before the first CreateTopics the voters answered %v; then (time since the first CreateTopics):\n%s",
			baseline, strings.Join(bad, "\n"))
	}
	if createErr != nil {
		t.Errorf("CreateTopics: %v", createErr)
	}
	if hostErr != nil {
		t.Error(hostErr)
	}
}

// createStabilityTopics sends the CreateTopics from four goroutines, the big
// one alone and the others three at a time, as several clients would. A
// retriable error is retried.
// It returns when each topic was answered, relative to start.
func createStabilityTopics(adm *kadm.Client, start time.Time) ([]string, error) {
	work := make(chan int, len(stabilityTopics))
	for i := range stabilityTopics {
		work <- i
	}
	close(work)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		answers []string
		errs    []error
	)
	for range 4 {
		wg.Go(func() {
			for i := range work {
				st := stabilityTopics[i]
				err := createTopicRetrying(adm, st.name, st.partitions)
				mu.Lock()
				answers = append(answers, fmt.Sprintf("%s at %s", st.name, time.Since(start).Round(time.Millisecond)))
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return answers, errors.Join(errs...)
}

func createTopicRetrying(adm *kadm.Client, name string, partitions int32) error {
	deadline := time.Now().Add(60 * time.Second)
	for attempt := 0; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		resp, err := adm.CreateTopic(ctx, partitions, stabilityRF, nil, name)
		cancel()
		if err == nil {
			err = resp.Err
		}
		// The names are new to this cluster, so an existing topic is this
		// test's own: a retry (kgo's or ours) after a lost answer.
		if err == nil || errors.Is(err, kerr.TopicAlreadyExists) {
			return nil
		}
		if !kerr.IsRetriable(err) && !errors.Is(err, context.DeadlineExceeded) || time.Now().After(deadline) {
			return fmt.Errorf("create topic %s (%d partitions), attempt %d: %w", name, partitions, attempt+1, err)
		}
	}
}

// awaitAllHosted waits until every node's Metadata lists every partition
// with a leader and every node's DescribeLogDirs holds a log for each
// replica that Metadata assigns it.
func awaitAllHosted(cl *kgo.Client, l *testcluster.Layout, timeout time.Duration) error {
	topics := make([]string, 0, len(stabilityTopics))
	for _, st := range stabilityTopics {
		topics = append(topics, st.name)
	}
	deadline := time.Now().Add(timeout)
	for {
		err := allNodesHostReplicas(cl, l, topics)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not every node hosts its replicas after %s: %w", timeout, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func allNodesHostReplicas(cl *kgo.Client, l *testcluster.Layout, topics []string) error {
	for _, n := range l.Nodes {
		if err := nodeHostsReplicas(cl, n.ID, topics); err != nil {
			return fmt.Errorf("node %d: %w", n.ID, err)
		}
	}
	return nil
}

func nodeHostsReplicas(cl *kgo.Client, id int32, topics []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	md, err := metadataFrom(ctx, cl, id, topics)
	if err != nil {
		return err
	}
	want := map[string]map[int32]bool{}
	led := 0
	for _, td := range md.Topics {
		for _, pd := range td.Partitions {
			if pd.ErrorCode == 0 && pd.Leader >= 0 {
				led++
			}
			if !slices.Contains(pd.Replicas, id) {
				continue
			}
			if want[*td.Topic] == nil {
				want[*td.Topic] = map[int32]bool{}
			}
			want[*td.Topic][pd.Partition] = true
		}
	}
	if led != stabilityPartitions {
		return fmt.Errorf("metadata lists %d partitions with a leader, want %d", led, stabilityPartitions)
	}
	dirs, err := kadm.NewClient(cl).DescribeBrokerLogDirs(ctx, id, nil)
	if err != nil {
		return fmt.Errorf("describe log dirs: %w", err)
	}
	if err := dirs.Error(); err != nil {
		return fmt.Errorf("log dir: %w", err)
	}
	hosted, wanted := 0, 0
	for _, ps := range want {
		wanted += len(ps)
	}
	dirs.EachPartition(func(p kadm.DescribedLogDirPartition) {
		if want[p.Topic][p.Partition] {
			hosted++
		}
	})
	if hosted != wanted {
		return fmt.Errorf("hosts %d of its %d replicas", hosted, wanted)
	}
	return nil
}

// metadataFrom asks node id itself (not any broker) for the topics.
func metadataFrom(ctx context.Context, cl *kgo.Client, id int32, topics []string) (*kmsg.MetadataResponse, error) {
	req := kmsg.NewPtrMetadataRequest()
	for _, name := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := cl.Broker(int(id)).Request(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	return resp.(*kmsg.MetadataResponse), nil
}

// quorumLogLines are the lines each node logged after its offset in
// logStart about Raft roles (pre-votes, elections, leases, leaders stepping
// down) and about brokers fenced.
func quorumLogLines(c *testcluster.Processes, logStart []int) []string {
	var out []string
	repeats := 0
	for i := range c.Layout.Nodes {
		logs := c.Logs(i)
		if logStart[i] > len(logs) {
			continue
		}
		for line := range strings.SplitSeq(logs[logStart[i]:], "\n") {
			raft := strings.Contains(line, "component=quorum") &&
				(strings.Contains(line, "became") || strings.Contains(line, "election") ||
					strings.Contains(line, "lease") || strings.Contains(line, "stepped down"))
			if !raft && !strings.Contains(line, "fenced a broker") {
				continue
			}
			line = fmt.Sprintf("node %d: %s", c.Layout.Nodes[i].ID, line)
			if n := len(out); n > 0 && strings.HasPrefix(out[n-1], line) {
				// Raft logs a refused vote once per message; say how many.
				repeats++
				out[n-1] = fmt.Sprintf("%s (x%d)", line, repeats)
				continue
			}
			repeats = 1
			out = append(out, line)
		}
	}
	return out
}

// quorumView is one voter's answer to DescribeQuorum on its own CONTROLLER
// listener, its own view, not forwarded: the leader answers with its
// epoch, another voter with NOT_LEADER_OR_FOLLOWER naming the leader it
// follows (epoch -1 here: not told).
type quorumView struct{ leader, epoch int32 }

func (v quorumView) String() string {
	if v.epoch < 0 {
		return fmt.Sprintf("(follows leader %d)", v.leader)
	}
	return fmt.Sprintf("(leader %d, epoch %d)", v.leader, v.epoch)
}

// quorumEvent is a voter's answer that differs from its previous one.
type quorumEvent struct {
	at   time.Time
	node int32
	view quorumView
	err  error
}

func (e quorumEvent) String(since time.Time) string {
	what := e.view.String()
	if e.err != nil {
		what = "error: " + e.err.Error()
	}
	return fmt.Sprintf("  %8s node %d: %s", e.at.Sub(since).Round(time.Millisecond), e.node, what)
}

// quorumSampler asks every voter for its view of the quorum every
// stabilitySampleEvery and keeps each change.
type quorumSampler struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	nodes  int

	mu      sync.Mutex
	last    map[int32]quorumEvent
	events  []quorumEvent
	samples int
}

func startQuorumSampler(t *testing.T, l *testcluster.Layout) *quorumSampler {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &quorumSampler{cancel: cancel, nodes: len(l.Nodes), last: map[int32]quorumEvent{}}
	t.Cleanup(func() { s.stop() })
	for _, n := range l.Nodes {
		cl, err := kgo.NewClient(kgo.SeedBrokers(n.ControllerAddr))
		if err != nil {
			t.Fatal(err)
		}
		s.wg.Go(func() {
			defer cl.Close()
			s.sample(ctx, cl, n.ID)
		})
	}
	return s
}

func (s *quorumSampler) sample(ctx context.Context, cl *kgo.Client, id int32) {
	tick := time.NewTicker(stabilitySampleEvery)
	defer tick.Stop()
	for {
		view, err := describeQuorumView(ctx, cl)
		if ctx.Err() != nil {
			return
		}
		s.record(quorumEvent{at: time.Now(), node: id, view: view, err: err})
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (s *quorumSampler) record(e quorumEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples++
	prev, seen := s.last[e.node]
	if seen && prev.view == e.view && fmt.Sprint(prev.err) == fmt.Sprint(e.err) {
		return
	}
	s.last[e.node] = e
	s.events = append(s.events, e)
}

// awaitAgreement waits until every voter names one leader and that leader
// answers with its epoch, forgets what came before and returns each
// voter's view.
func (s *quorumSampler) awaitAgreement(t *testing.T, timeout time.Duration) map[int32]quorumView {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if views, ok := s.agreed(); ok {
			return views
		}
		if time.Now().After(deadline) {
			s.mu.Lock()
			defer s.mu.Unlock()
			t.Fatalf("voters did not agree on a quorum leader within %s: %v", timeout, s.last)
		}
		time.Sleep(stabilitySampleEvery)
	}
}

func (s *quorumSampler) agreed() (map[int32]quorumView, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.last) < s.nodes {
		return nil, false
	}
	views := map[int32]quorumView{}
	var leader int32 = -1
	for id, e := range s.last {
		if e.err != nil || e.view.leader < 0 || (leader >= 0 && e.view.leader != leader) {
			return nil, false
		}
		leader = e.view.leader
		views[id] = e.view
	}
	if lv, ok := views[leader]; !ok || lv.epoch < 0 {
		return nil, false
	}
	s.events, s.samples = nil, 0
	return views, true
}

// stop ends the sampling (once) and returns the events since the
// agreement and the number of samples taken.
func (s *quorumSampler) stop() ([]quorumEvent, int) {
	s.cancel()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.events, s.samples
}

func describeQuorumView(ctx context.Context, cl *kgo.Client) (quorumView, error) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		return quorumView{}, err
	}
	dq := resp.(*kmsg.DescribeQuorumResponse)
	if err := kerr.ErrorForCode(dq.ErrorCode); err != nil {
		return quorumView{}, err
	}
	if len(dq.Topics) != 1 || len(dq.Topics[0].Partitions) != 1 {
		return quorumView{}, fmt.Errorf("DescribeQuorum answered %d topics", len(dq.Topics))
	}
	p := dq.Topics[0].Partitions[0]
	if p.ErrorCode == kerr.NotLeaderForPartition.Code {
		return quorumView{leader: p.LeaderID, epoch: -1}, nil
	}
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return quorumView{}, err
	}
	return quorumView{leader: p.LeaderID, epoch: p.LeaderEpoch}, nil
}
