package integration

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/testbin"
	"github.com/sluice-io/sluice/internal/testutil"
)

const groupTopic = "grouped"

// groupMember is one franz-go consumer of the test group, recording what it
// reads.
type groupMember struct {
	cl   *kgo.Client
	mu   sync.Mutex
	seen map[string]int
	// assigned counts the partitions assigned to it right now.
	assigned int
}

func startMember(t *testing.T, addr string, balancer kgo.GroupBalancer) *groupMember {
	t.Helper()
	m := &groupMember{seen: make(map[string]int)}
	m.cl = newClient(t, addr,
		kgo.ConsumerGroup("itest"), kgo.ConsumeTopics(groupTopic), kgo.Balancers(balancer),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, a map[string][]int32) {
			m.mu.Lock()
			m.assigned += len(a[groupTopic])
			m.mu.Unlock()
		}),
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, r map[string][]int32) {
			m.mu.Lock()
			m.assigned -= len(r[groupTopic])
			m.mu.Unlock()
			// Commit on revoke, so the next owner starts where we stopped.
			if err := cl.CommitMarkedOffsets(ctx); err != nil {
				t.Logf("commit on revoke: %v", err)
			}
		}),
		kgo.AutoCommitMarks(),
	)
	return m
}

// poll reads once (bounded) and marks what it read for commit.
func (m *groupMember) poll(ctx context.Context) int {
	ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	fetches := m.cl.PollFetches(ctx)
	n := 0
	fetches.EachRecord(func(r *kgo.Record) {
		m.mu.Lock()
		m.seen[string(r.Value)]++
		m.mu.Unlock()
		m.cl.MarkCommitRecords(r)
		n++
	})
	return n
}

func (m *groupMember) assignedCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.assigned
}

func produceTo(t *testing.T, ctx context.Context, addr string, from, n int) {
	t.Helper()
	cl := newClient(t, addr, kgo.DefaultProduceTopic(groupTopic))
	recs := make([]*kgo.Record, n)
	for i := range recs {
		v := strconv.Itoa(from + i)
		recs[i] = &kgo.Record{Key: []byte("k" + v), Value: []byte(v)}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	cl.Close()
}

// TestConsumerGroupRebalanceAndRestart: two franz-go members (eager range
// and cooperative-sticky runs) split the partitions, one leaves and the
// other takes everything over, nothing is lost, and the committed offsets
// survive a server restart.
func TestConsumerGroupRebalanceAndRestart(t *testing.T) {
	t.Parallel() // mostly waiting on group timers; each test has its own server
	for _, tc := range []struct {
		name     string
		balancer func() kgo.GroupBalancer
	}{
		{"cooperative-sticky", kgo.CooperativeStickyBalancer},
		{"eager-range", kgo.RangeBalancer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testGroupRebalanceAndRestart(t, tc.balancer)
		})
	}
}

func testGroupRebalanceAndRestart(t *testing.T, balancer func() kgo.GroupBalancer) {
	dir := t.TempDir()
	port := freePort(t)
	srv := startServer(t, dir, port)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, srv.addr))
	if _, err := adm.CreateTopic(ctx, 4, 1, nil, groupTopic); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	const total = 400
	produceTo(t, ctx, srv.addr, 0, total)

	a := startMember(t, srv.addr, balancer())
	b := startMember(t, srv.addr, balancer())
	// Read until both hold partitions and everything was read.
	readAll := func(members ...*groupMember) map[string]int {
		all := make(map[string]int)
		for {
			for _, m := range members {
				m.poll(ctx)
			}
			clear(all)
			for _, m := range members {
				m.mu.Lock()
				for k, v := range m.seen {
					all[k] += v
				}
				m.mu.Unlock()
			}
			if len(all) >= total || ctx.Err() != nil {
				return all
			}
		}
	}
	all := readAll(a, b)
	if len(all) != total {
		t.Fatalf("read %d distinct records of %d", len(all), total)
	}
	for ctx.Err() == nil && (a.assignedCount() == 0 || b.assignedCount() == 0 || a.assignedCount()+b.assignedCount() != 4) {
		a.poll(ctx)
		b.poll(ctx)
	}
	if a.assignedCount()+b.assignedCount() != 4 || a.assignedCount() == 0 {
		t.Fatalf("assignment split %d/%d", a.assignedCount(), b.assignedCount())
	}

	// b leaves (LeaveGroup, after committing on revoke); a takes all four.
	if err := b.cl.CommitMarkedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	b.cl.Close()
	for ctx.Err() == nil && a.assignedCount() != 4 {
		a.poll(ctx)
	}
	if a.assignedCount() != 4 {
		t.Fatalf("after leave a holds %d partitions", a.assignedCount())
	}
	produceTo(t, ctx, srv.addr, total, 100)
	for ctx.Err() == nil {
		a.poll(ctx)
		a.mu.Lock()
		n := 0
		for i := total; i < total+100; i++ {
			if a.seen[strconv.Itoa(i)] > 0 {
				n++
			}
		}
		a.mu.Unlock()
		if n == 100 {
			break
		}
	}
	if err := a.cl.CommitMarkedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	offsets, err := adm.FetchOffsets(ctx, "itest")
	if err != nil {
		t.Fatalf("fetch offsets: %v", err)
	}
	var committed int64
	offsets.Each(func(o kadm.OffsetResponse) { committed += o.At })
	if committed != total+100 {
		t.Fatalf("committed offsets sum to %d, want %d", committed, total+100)
	}
	a.cl.Close()

	srv.stop()
	srv = startServer(t, dir, port)
	adm = kadm.NewClient(newClient(t, srv.addr))
	var after int64
	deadline, _ := ctx.Deadline()
	testutil.EventuallyNoError(t, time.Until(deadline), func() error {
		offsets, err := adm.FetchOffsets(ctx, "itest")
		if err != nil {
			return err
		}
		after = 0
		offsets.Each(func(o kadm.OffsetResponse) { after += o.At })
		return nil
	}, "fetch offsets after restart")
	if after != total+100 {
		t.Fatalf("after restart committed offsets sum to %d, want %d", after, total+100)
	}
	groups, err := adm.DescribeGroups(ctx, "itest")
	if err != nil {
		t.Fatalf("describe: %v", err)
	}
	if g := groups["itest"]; g.State != "Empty" {
		t.Fatalf("group after restart: %+v", g)
	}
}

// BenchmarkOffsetCommitTenClients: 10 clients (kadm at default settings)
// each commit one offset of their own group in a loop against a real
// server; reports commits/s.
//
//	go test -run XXX -bench OffsetCommitTenClients -benchtime 20000x ./test/integration
func BenchmarkOffsetCommitTenClients(b *testing.B) {
	addr := testbin.StartServer(b, binaryPath, testbin.ServerConfig{DataDir: b.TempDir()}).Addr()
	ctx := context.Background()
	setup := kadm.NewClient(newClientTB(b, addr))
	if _, err := setup.CreateTopic(ctx, 1, 1, nil, groupTopic); err != nil {
		b.Fatalf("create topic: %v", err)
	}
	const clients = 10
	admins := make([]*kadm.Client, clients)
	for i := range admins {
		admins[i] = kadm.NewClient(newClientTB(b, addr))
		// Warm up: find the coordinator, load the shard.
		testutil.Eventually(b, 30*time.Second, func() bool {
			var offs kadm.Offsets
			offs.AddOffset(groupTopic, 0, 0, -1)
			r, err := admins[i].CommitOffsets(ctx, "bench-"+strconv.Itoa(i), offs)
			return err == nil && r.Ok()
		}, "client %d commits", i)
	}
	per := b.N/clients + 1
	b.ResetTimer()
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			for n := range per {
				var offs kadm.Offsets
				offs.AddOffset(groupTopic, 0, int64(n), -1)
				r, err := admins[i].CommitOffsets(ctx, "bench-"+strconv.Itoa(i), offs)
				if err == nil {
					err = r.Error()
				}
				if err != nil {
					b.Errorf("commit: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(per*clients)/b.Elapsed().Seconds(), "commits/s")
}

// BenchmarkRebalanceAfterLeave: 10 franz-go members (default settings,
// cooperative-sticky) are stable on 20 partitions; one leaves; the time
// until the other 9 again own all 20 partitions is reported.
//
//	go test -run XXX -bench RebalanceAfterLeave -benchtime 3x ./test/integration
func BenchmarkRebalanceAfterLeave(b *testing.B) {
	addr := testbin.StartServer(b, binaryPath, testbin.ServerConfig{DataDir: b.TempDir()}).Addr()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	setup := kadm.NewClient(newClientTB(b, addr))
	if _, err := setup.CreateTopic(ctx, 20, 1, nil, groupTopic); err != nil {
		b.Fatalf("create topic: %v", err)
	}
	var total time.Duration
	for i := range b.N {
		b.StopTimer()
		groupID := "rebalance-" + strconv.Itoa(i)
		members := make([]*benchMember, 10)
		for j := range members {
			members[j] = newBenchMember(b, addr, groupID)
		}
		owned := func(ms []*benchMember) int {
			n := 0
			for _, m := range ms {
				n += int(m.owned.Load())
			}
			return n
		}
		testutil.Eventually(b, time.Minute, func() bool { return owned(members) == 20 && allOwn(members) }, "10 members own the 20 partitions")
		start := time.Now()
		b.StartTimer()
		members[0].cl.Close()
		rest := members[1:]
		// A measurement: a fixed 5 ms poll keeps the sample's resolution.
		for ctx.Err() == nil && owned(rest) != 20 {
			time.Sleep(5 * time.Millisecond)
		}
		b.StopTimer()
		total += time.Since(start)
		for _, m := range rest {
			m.cl.Close()
		}
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s/rebalance")
}

type benchMember struct {
	cl    *kgo.Client
	owned atomic.Int32
}

func newBenchMember(b *testing.B, addr, groupID string) *benchMember {
	m := &benchMember{}
	var err error
	m.cl, err = kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup(groupID), kgo.ConsumeTopics(groupTopic),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, a map[string][]int32) { m.owned.Add(int32(len(a[groupTopic]))) }),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, r map[string][]int32) { m.owned.Add(-int32(len(r[groupTopic]))) }),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, l map[string][]int32) { m.owned.Add(-int32(len(l[groupTopic]))) }),
	)
	if err != nil {
		b.Fatal(err)
	}
	// PollFetches drives the group; a poll loop per member, ended by Close.
	go func() {
		for {
			if f := m.cl.PollFetches(context.Background()); f.IsClientClosed() {
				return
			}
		}
	}()
	return m
}

func allOwn(ms []*benchMember) bool {
	for _, m := range ms {
		if m.owned.Load() == 0 {
			return false
		}
	}
	return true
}

func newClientTB(tb testing.TB, addr string, opts ...kgo.Opt) *kgo.Client {
	tb.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(cl.Close)
	return cl
}

// TestGroupsChurnUnderLoad: two groups of three cooperative-sticky members
// each read a topic while it is written; members join one after another
// and two leave mid-stream. Every member commits what it read when
// partitions are revoked, so each group must read every record exactly
// once: nothing lost, nothing read twice.
func TestGroupsChurnUnderLoad(t *testing.T) {
	t.Parallel() // mostly waiting on group timers; each test has its own server
	if testing.Short() {
		t.Skip("slow: real server, six consumers")
	}
	srv := startServer(t, t.TempDir(), freePort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, srv.addr))
	if _, err := adm.CreateTopic(ctx, 6, 1, nil, groupTopic); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	const total = 3000
	producerDone := make(chan struct{})
	go func() {
		defer close(producerDone)
		cl := newClient(t, srv.addr, kgo.DefaultProduceTopic(groupTopic))
		for i := 0; i < total; i += 100 {
			recs := make([]*kgo.Record, 100)
			for j := range recs {
				v := strconv.Itoa(i + j)
				recs[j] = &kgo.Record{Key: []byte("k" + v), Value: []byte(v)}
			}
			if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				t.Errorf("produce: %v", err)
				return
			}
			time.Sleep(20 * time.Millisecond) // the load's pace: writes go on during the churn
		}
	}()

	type groupRun struct {
		mu      sync.Mutex
		seen    map[string]int
		members []*churnMember
	}
	runs := []*groupRun{{seen: map[string]int{}}, {seen: map[string]int{}}}
	for gi, run := range runs {
		for range 3 {
			run.members = append(run.members, startChurnMember(t, ctx, srv.addr, "churn-"+strconv.Itoa(gi), func(v string) {
				run.mu.Lock()
				run.seen[v]++
				run.mu.Unlock()
			}))
			// One after another: the next joins once the group has taken
			// this one in (every member owns partitions).
			testutil.Eventually(t, time.Minute, func() bool { return allChurnOwn(run.members) }, "group %d takes in member %d", gi, len(run.members))
		}
	}
	// One member of each group leaves.
	for _, run := range runs {
		run.members[0].stop()
	}
	<-producerDone
	for gi, run := range runs {
		deadline, _ := ctx.Deadline()
		testutil.EventuallyNoError(t, time.Until(deadline), func() error {
			run.mu.Lock()
			defer run.mu.Unlock()
			if n := len(run.seen); n != total {
				return fmt.Errorf("read %d of %d distinct records", n, total)
			}
			return nil
		}, "group %d reads every record", gi)
		for _, m := range run.members[1:] {
			m.stop()
		}
		run.mu.Lock()
		dups := 0
		for i := range total {
			switch n := run.seen[strconv.Itoa(i)]; {
			case n == 0:
				t.Errorf("group %d: record %d never read", gi, i)
			case n > 1:
				dups++
			}
		}
		run.mu.Unlock()
		if dups > 0 {
			t.Errorf("group %d: %d records read more than once despite commits on revoke", gi, dups)
		}
	}
}

// churnMember is a consumer that commits what it read on revoke.
type churnMember struct {
	cl   *kgo.Client
	done chan struct{}
	// owned counts the partitions it holds.
	owned atomic.Int32
}

// allChurnOwn reports whether every member holds partitions.
func allChurnOwn(ms []*churnMember) bool {
	for _, m := range ms {
		if m.owned.Load() == 0 {
			return false
		}
	}
	return true
}

func startChurnMember(t *testing.T, ctx context.Context, addr, groupID string, record func(string)) *churnMember {
	t.Helper()
	m := &churnMember{done: make(chan struct{})}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup(groupID), kgo.ConsumeTopics(groupTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.AutoCommitMarks(), kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, a map[string][]int32) { m.owned.Add(int32(len(a[groupTopic]))) }),
		// Without OnPartitionsLost, kgo calls this for lost partitions too.
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, r map[string][]int32) {
			m.owned.Add(-int32(len(r[groupTopic])))
			if err := cl.CommitMarkedOffsets(ctx); err != nil {
				t.Logf("%s: commit on revoke: %v", groupID, err)
			}
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	m.cl = cl
	go func() {
		defer close(m.done)
		for {
			fetches := cl.PollFetches(ctx)
			if fetches.IsClientClosed() || ctx.Err() != nil {
				return
			}
			fetches.EachRecord(func(r *kgo.Record) {
				record(string(r.Value))
				cl.MarkCommitRecords(r)
			})
			cl.AllowRebalance()
		}
	}()
	return m
}

func (m *churnMember) stop() {
	m.cl.Close()
	<-m.done
}

// TestKilledMemberExpires: a member that stops heartbeating without leaving
// (as if killed) is removed after its session timeout, and the surviving
// franz-go member is given its partitions.
func TestKilledMemberExpires(t *testing.T) {
	t.Parallel() // mostly waiting on group timers; each test has its own server
	if testing.Short() {
		t.Skip("slow: waits out a 6 s session timeout")
	}
	srv := startServer(t, t.TempDir(), freePort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, srv.addr))
	if _, err := adm.CreateTopic(ctx, 4, 1, nil, groupTopic); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	survivor := startMember(t, srv.addr, kgo.CooperativeStickyBalancer())
	for ctx.Err() == nil && survivor.assignedCount() != 4 {
		survivor.poll(ctx)
	}

	// The doomed member speaks the protocol by hand: join (twice, KIP-394),
	// sync, then silence.
	raw := newClient(t, srv.addr)
	sub := kmsg.NewConsumerMemberMetadata()
	sub.Topics = []string{groupTopic}
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.ProtocolType = "itest", "consumer"
	join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = 6000, 30000
	proto := kmsg.NewJoinGroupRequestProtocol()
	proto.Name, proto.Metadata = "cooperative-sticky", sub.AppendTo(nil)
	join.Protocols = append(join.Protocols, proto)
	first, err := join.RequestWith(ctx, raw)
	if err != nil || first.ErrorCode != kerr.MemberIDRequired.Code {
		t.Fatalf("first join: %v %+v", err, first)
	}
	join.MemberID = first.MemberID
	joined := make(chan *kmsg.JoinGroupResponse, 1)
	go func() {
		r, err := join.RequestWith(ctx, raw)
		if err != nil {
			t.Errorf("join: %v", err)
		}
		joined <- r
	}()
	var jr *kmsg.JoinGroupResponse
	for jr == nil && ctx.Err() == nil {
		survivor.poll(ctx)
		select {
		case jr = <-joined:
		default:
		}
	}
	if jr == nil || jr.ErrorCode != 0 {
		t.Fatalf("join: %+v", jr)
	}
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group, sync.MemberID, sync.Generation = "itest", jr.MemberID, jr.Generation
	if _, err := sync.RequestWith(ctx, raw); err != nil {
		t.Fatalf("sync: %v", err)
	}
	// The survivor keeps polling; once the silent member's session ends it
	// must own all four partitions again.
	start := time.Now()
	for ctx.Err() == nil && survivor.assignedCount() != 4 {
		survivor.poll(ctx)
	}
	for ctx.Err() == nil {
		d, err := adm.DescribeGroups(ctx, "itest")
		if err == nil && len(d["itest"].Members) == 1 && d["itest"].State == "Stable" {
			break
		}
		survivor.poll(ctx)
	}
	for ctx.Err() == nil && survivor.assignedCount() != 4 {
		survivor.poll(ctx)
	}
	if ctx.Err() != nil {
		t.Fatalf("survivor never took the partitions back (holds %d)", survivor.assignedCount())
	}
	if waited := time.Since(start); waited < 5*time.Second {
		t.Fatalf("silent member removed after %v, before its 6 s session", waited)
	}
}

// TestStaticMemberRestartWithoutRebalance: a static member (KIP-345) that
// restarts within its session gets its partitions back, and the other
// member never has a partition revoked.
func TestStaticMemberRestartWithoutRebalance(t *testing.T) {
	t.Parallel() // mostly waiting on group timers; each test has its own server
	if testing.Short() {
		t.Skip("slow: real server")
	}
	srv := startServer(t, t.TempDir(), freePort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, srv.addr))
	if _, err := adm.CreateTopic(ctx, 4, 1, nil, groupTopic); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	var revokedFromStayer atomic.Int32
	static := func(instance string, assigned *atomic.Int32, revoked *atomic.Int32) *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(srv.addr), kgo.ConsumerGroup("static"), kgo.ConsumeTopics(groupTopic),
			kgo.InstanceID(instance), kgo.SessionTimeout(30*time.Second),
			kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, a map[string][]int32) { assigned.Add(int32(len(a[groupTopic]))) }),
			kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, r map[string][]int32) {
				if revoked != nil {
					revoked.Add(int32(len(r[groupTopic])))
				}
			}),
		)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for !cl.PollFetches(ctx).IsClientClosed() && ctx.Err() == nil {
			}
		}()
		return cl
	}
	var stayerOwned, leaverOwned, restartedOwned atomic.Int32
	stayer := static("stayer", &stayerOwned, &revokedFromStayer)
	defer stayer.Close()
	leaver := static("leaver", &leaverOwned, nil)
	testutil.Eventually(t, time.Minute, func() bool {
		return leaverOwned.Load() != 0 && stayerOwned.Load()-revokedFromStayer.Load()+leaverOwned.Load() == 4
	}, "both members own the four partitions")
	revokedBefore := revokedFromStayer.Load()
	leaver.Close() // a static member does not leave the group on close
	restarted := static("leaver", &restartedOwned, nil)
	defer restarted.Close()
	testutil.EventuallyNoError(t, time.Minute, func() error {
		if got, had := restartedOwned.Load(), leaverOwned.Load(); got != had {
			return fmt.Errorf("restarted member owns %d partitions, had %d", got, had)
		}
		return nil
	}, "the restarted member gets its partitions back")
	// A negative: no rebalance may follow, so only a pause can show none
	// did; a second is ample for one to revoke the other member's.
	time.Sleep(time.Second)
	if got := revokedFromStayer.Load(); got != revokedBefore {
		t.Fatalf("the other member lost %d partitions: the restart rebalanced", got-revokedBefore)
	}
}
