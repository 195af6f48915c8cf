package groupcoord

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/coordinator/runtime"
	"github.com/sluice-io/sluice/internal/coordinator/runtime/runtimetest"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/records/recordstest"
	"github.com/sluice-io/sluice/internal/testutil"
)

const testNode int32 = 1

// offsetsImage is an image with the offsets topic of n partitions led by
// leader (at epoch), and broker 1 on PLAINTEXT localhost:9092.
func offsetsImage(t testing.TB, n int32, leader, epoch int32) *metadata.Image {
	t.Helper()
	d := metadata.NewDelta(metadata.EmptyImage())
	id := kafka.UUID{1, 2, 3}
	recs := []metadata.Record{
		&metadata.RegisterBrokerRecord{BrokerID: testNode, BrokerEpoch: 1, Endpoints: []metadata.Endpoint{{Name: "PLAINTEXT", Host: "localhost", Port: 9092}}},
		&metadata.TopicRecord{Name: OffsetsTopic, TopicID: id},
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

type testCoordinator struct {
	*GroupCoordinator
	log   *runtimetest.MemLog
	image *metadata.Image
}

func startCoordinator(t *testing.T, log *runtimetest.MemLog, cfg group.Config) *testCoordinator {
	t.Helper()
	tc := &testCoordinator{log: log, image: offsetsImage(t, 3, testNode, 0)}
	c, err := New(Options{
		NodeID: testNode, Group: cfg, NumPartitions: 3, Writer: log,
		Image: func() *metadata.Image { return tc.image }, TickInterval: 5 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	tc.GroupCoordinator = c
	c.ApplyImage(tc.image)
	t.Cleanup(c.Close)
	return tc
}

func testGroupConfig() group.Config {
	cfg := group.DefaultConfig()
	cfg.InitialRebalanceDelay = 0
	return cfg
}

// waitLoaded retries until the group's shard has loaded.
func waitLoaded(t *testing.T, c *GroupCoordinator, groupID string) {
	t.Helper()
	testutil.Eventually(t, 5*time.Second, func() bool {
		_, code := c.FetchOffsets(context.Background(), groupID, nil, false)
		return code == 0
	}, "shard of %q loaded", groupID)
}

func joinReq(groupID, memberID, client string) group.JoinRequest {
	return group.JoinRequest{
		GroupID: groupID, MemberID: memberID, ClientID: client, ClientHost: "/127.0.0.1",
		SessionTimeout: 10 * time.Second, RebalanceTimeout: 10 * time.Second,
		ProtocolType: "consumer", Protocols: []group.Protocol{{Name: "range", Metadata: []byte(client)}},
		RequireKnownMemberID: true,
	}
}

func TestJoinSyncCommitSurviveRestart(t *testing.T) {
	log := runtimetest.NewMemLog()
	c := startCoordinator(t, log, testGroupConfig())
	ctx := context.Background()
	waitLoaded(t, c.GroupCoordinator, "g")

	first := c.JoinGroup(ctx, joinReq("g", "", "c1"))
	if first.ErrorCode != kerr.MemberIDRequired.Code {
		t.Fatalf("first join: %v", kerr.ErrorForCode(first.ErrorCode))
	}
	if r := c.JoinGroup(ctx, joinReq("g", first.MemberID, "c1")); r.ErrorCode != 0 || r.GenerationID != 1 {
		t.Fatalf("first generation: %+v", r)
	}
	// A second member's join blocks until the first rejoins.
	var wg sync.WaitGroup
	results := make([]group.JoinResult, 2)
	second := c.JoinGroup(ctx, joinReq("g", "", "c2"))
	wg.Go(func() { results[1] = c.JoinGroup(ctx, joinReq("g", second.MemberID, "c2")) })
	waitState(t, c.GroupCoordinator, "g", group.PreparingRebalance)
	results[0] = c.JoinGroup(ctx, joinReq("g", first.MemberID, "c1"))
	wg.Wait()
	for i, r := range results {
		if r.ErrorCode != 0 || r.GenerationID != 2 {
			t.Fatalf("join %d: %+v", i, r)
		}
	}
	leader := results[0]
	if leader.LeaderID != leader.MemberID || len(leader.Members) != 2 {
		t.Fatalf("leader answer: %+v", leader)
	}
	var syncs [2]group.SyncResult
	wg.Go(func() {
		syncs[1] = c.SyncGroup(ctx, group.SyncRequest{GroupID: "g", MemberID: second.MemberID, GenerationID: 2})
	})
	syncs[0] = c.SyncGroup(ctx, group.SyncRequest{GroupID: "g", MemberID: first.MemberID, GenerationID: 2,
		Assignments: map[string][]byte{first.MemberID: []byte("p0"), second.MemberID: []byte("p1")}})
	wg.Wait()
	if string(syncs[0].Assignment) != "p0" || string(syncs[1].Assignment) != "p1" {
		t.Fatalf("syncs: %+v", syncs)
	}
	commit := c.CommitOffsets(ctx, group.CommitRequest{GroupID: "g", MemberID: first.MemberID, GenerationID: 2,
		Partitions: []group.CommitPartition{{TP: kafka.TopicPartition{Topic: "t", Partition: 0}, Offset: 42, LeaderEpoch: 1, Metadata: ptr("m")}}})
	if commit.Errors[0] != 0 {
		t.Fatalf("commit: %v", kerr.ErrorForCode(commit.Errors[0]))
	}
	standalone := c.CommitOffsets(ctx, group.CommitRequest{GroupID: "tool", GenerationID: -1,
		Partitions: []group.CommitPartition{{TP: kafka.TopicPartition{Topic: "t", Partition: 1}, Offset: 7, LeaderEpoch: -1}}})
	if standalone.Errors[0] != 0 {
		t.Fatalf("standalone commit: %v", kerr.ErrorForCode(standalone.Errors[0]))
	}
	before := describeAll(t, c.GroupCoordinator)
	c.Close()

	// A new coordinator over the same log replays the same groups and offsets.
	c2 := startCoordinator(t, log, testGroupConfig())
	waitLoaded(t, c2.GroupCoordinator, "g")
	waitLoaded(t, c2.GroupCoordinator, "tool")
	if after := describeAll(t, c2.GroupCoordinator); after != before {
		t.Fatalf("after restart:\n%s\nbefore:\n%s", after, before)
	}
	hb := c2.Heartbeat(ctx, group.HeartbeatRequest{GroupID: "g", MemberID: second.MemberID, GenerationID: 2})
	if hb != 0 {
		t.Fatalf("heartbeat after restart: %v", kerr.ErrorForCode(hb))
	}
}

func waitState(t *testing.T, c *GroupCoordinator, groupID string, want group.State) {
	t.Helper()
	testutil.Eventually(t, 5*time.Second, func() bool {
		return c.DescribeGroup(context.Background(), groupID).State == want
	}, "group %q reaches %s", groupID, want)
}

func describeAll(t *testing.T, c *GroupCoordinator) string {
	t.Helper()
	ctx := context.Background()
	list, code := c.ListGroups(ctx)
	if code != 0 {
		t.Fatalf("list: %v", kerr.ErrorForCode(code))
	}
	out := ""
	for _, l := range list {
		d := c.DescribeGroup(ctx, l.GroupID)
		out += fmt.Sprintf("%s %s %q %q\n", l.GroupID, d.State, d.ProtocolType, d.Protocol)
		for _, m := range d.Members {
			out += fmt.Sprintf("  %s %q\n", m.MemberID, m.Assignment)
		}
		offs, code := c.FetchOffsets(ctx, l.GroupID, nil, false)
		if code != 0 {
			t.Fatalf("fetch: %v", kerr.ErrorForCode(code))
		}
		for _, o := range offs {
			out += fmt.Sprintf("  %s %d %d %s\n", o.TP, o.Offset, o.LeaderEpoch, *o.Metadata)
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func TestNotCoordinatorAndFailedWrites(t *testing.T) {
	log := runtimetest.NewMemLog()
	c := startCoordinator(t, log, testGroupConfig())
	ctx := context.Background()
	waitLoaded(t, c.GroupCoordinator, "g")

	log.SetFail(kerr.NotEnoughReplicas)
	res := c.CommitOffsets(ctx, group.CommitRequest{GroupID: "g", GenerationID: -1,
		Partitions: []group.CommitPartition{{TP: kafka.TopicPartition{Topic: "t"}, Offset: 1}}})
	if res.Errors[0] != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("commit with failing log: %v", kerr.ErrorForCode(res.Errors[0]))
	}
	log.SetFail(nil)
	offs, _ := c.FetchOffsets(ctx, "g", []kafka.TopicPartition{{Topic: "t"}}, false)
	if offs[0].Offset != -1 {
		t.Fatalf("failed commit visible: %+v", offs[0])
	}

	// The node loses leadership of every partition.
	c.image = offsetsImage(t, 3, 2, 1)
	c.ApplyImage(c.image)
	if hb := c.Heartbeat(ctx, group.HeartbeatRequest{GroupID: "g", MemberID: "m", GenerationID: 1}); hb != kerr.NotCoordinator.Code {
		t.Fatalf("heartbeat after resign: %v", kerr.ErrorForCode(hb))
	}
	node, code := c.FindCoordinator(ctx, "g", "PLAINTEXT")
	if code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("find coordinator with unregistered leader: %+v %v", node, kerr.ErrorForCode(code))
	}
}

func TestFindCoordinatorCreatesTopic(t *testing.T) {
	log := runtimetest.NewMemLog()
	var created []string
	var mu sync.Mutex
	image := metadata.EmptyImage()
	c, err := New(Options{NodeID: testNode, Group: testGroupConfig(), NumPartitions: 3, ReplicationFactor: 1, Writer: log,
		Image: func() *metadata.Image { mu.Lock(); defer mu.Unlock(); return image },
		CreateTopic: func(_ context.Context, name string, n int32, rf int16, cfg map[string]string) error {
			created = append(created, fmt.Sprintf("%s/%d/%d/%s", name, n, rf, cfg["cleanup.policy"]))
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, code := c.FindCoordinator(ctx, "g", "PLAINTEXT"); code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("before the topic: %v", kerr.ErrorForCode(code))
	}
	if len(created) != 1 || created[0] != "__consumer_offsets/3/1/compact" {
		t.Fatalf("created %v", created)
	}
	mu.Lock()
	image = offsetsImage(t, 3, testNode, 0)
	mu.Unlock()
	c.ApplyImage(image)
	node, code := c.FindCoordinator(ctx, "g", "PLAINTEXT")
	if code != 0 || node != (runtime.Node{NodeID: testNode, Host: "localhost", Port: 9092}) {
		t.Fatalf("find: %+v %v", node, kerr.ErrorForCode(code))
	}
	if _, code := c.FindCoordinator(ctx, "g", "OTHER"); code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("unknown listener: %v", kerr.ErrorForCode(code))
	}
}

func TestCommitsCoalesce(t *testing.T) {
	log := runtimetest.NewMemLog()
	c := startCoordinator(t, log, testGroupConfig())
	ctx := context.Background()
	waitLoaded(t, c.GroupCoordinator, "g")
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			res := c.CommitOffsets(ctx, group.CommitRequest{GroupID: "g", GenerationID: -1,
				Partitions: []group.CommitPartition{{TP: kafka.TopicPartition{Topic: "t", Partition: int32(i)}, Offset: int64(i)}}})
			if res.Errors[0] != 0 {
				t.Errorf("commit %d: %v", i, kerr.ErrorForCode(res.Errors[0]))
			}
		})
	}
	wg.Wait()
	offs, _ := c.FetchOffsets(ctx, "g", nil, true)
	if len(offs) != 50 {
		t.Fatalf("%d offsets", len(offs))
	}
	if n := log.Appends(); n > 50 {
		t.Fatalf("%d appends for 50 commits", n)
	}
}

// TestSessionExpiryOnTheShardClock: a member that stops heartbeating is
// removed by the shard's own timer once its session passes on the clock,
// and the survivor's heartbeat then reports the rebalance.
func TestSessionExpiryOnTheShardClock(t *testing.T) {
	log := runtimetest.NewMemLog()
	clk := clock.NewManual(time.Unix(1700000000, 0))
	image := offsetsImage(t, 3, testNode, 0)
	c, err := New(Options{NodeID: testNode, Group: testGroupConfig(), NumPartitions: 3, Writer: log, Clock: clk,
		Image: func() *metadata.Image { return image }, TickInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.ApplyImage(image)
	ctx := context.Background()
	waitLoaded(t, c, "g")
	join := func(member, client string) group.JoinResult {
		r := joinReq("g", member, client)
		r.RequireKnownMemberID = false
		return c.JoinGroup(ctx, r)
	}
	a := join("", "a")
	c.SyncGroup(ctx, group.SyncRequest{GroupID: "g", MemberID: a.MemberID, GenerationID: a.GenerationID})
	var wg sync.WaitGroup
	var b group.JoinResult
	wg.Go(func() { b = join("", "b") })
	waitState(t, c, "g", group.PreparingRebalance)
	a = join(a.MemberID, "a")
	wg.Wait()
	if a.GenerationID != 2 || b.GenerationID != 2 {
		t.Fatalf("generations %d %d", a.GenerationID, b.GenerationID)
	}
	wg.Go(func() {
		c.SyncGroup(ctx, group.SyncRequest{GroupID: "g", MemberID: b.MemberID, GenerationID: 2})
	})
	c.SyncGroup(ctx, group.SyncRequest{GroupID: "g", MemberID: a.MemberID, GenerationID: 2})
	wg.Wait()
	// b stays silent; a heartbeats every 4 s of a 10 s session.
	for range 2 {
		clk.Advance(4 * time.Second)
		if code := c.Heartbeat(ctx, group.HeartbeatRequest{GroupID: "g", MemberID: a.MemberID, GenerationID: 2}); code != 0 {
			t.Fatalf("heartbeat: %v", kerr.ErrorForCode(code))
		}
	}
	clk.Advance(3 * time.Second)
	// b's session expires when the shard's loop next ticks (on its timer
	// or after a round of operations), not within the Advance: wait for it.
	testutil.EventuallyNoError(t, 5*time.Second, func() error {
		code := c.Heartbeat(ctx, group.HeartbeatRequest{GroupID: "g", MemberID: a.MemberID, GenerationID: 2})
		if code != kerr.RebalanceInProgress.Code {
			return kerr.ErrorForCode(code)
		}
		return nil
	}, "rebalance after b's session expired")
	d := c.DescribeGroup(ctx, "g")
	if len(d.Members) != 1 || d.Members[0].MemberID != a.MemberID {
		t.Fatalf("members after expiry: %+v", d.Members)
	}
}

// TestLoadSkipsUndecodableRecords: a corrupt group record does not keep the
// partition from loading; the other records still replay.
func TestLoadSkipsUndecodableRecords(t *testing.T) {
	log := runtimetest.NewMemLog()
	p := runtime.PartitionFor("g", 3)
	bad := kmsg.GroupMetadataKey{Version: 2, Group: "g"}
	good := kmsg.OffsetCommitKey{Version: 1, Group: "g", Topic: "t", Partition: 0}
	val := kmsg.NewOffsetCommitValue()
	val.Version, val.Offset, val.Metadata = 3, 9, "m"
	batch := recordstest.Batch(t, []recordstest.Record{
		{Key: bad.AppendTo(nil), Value: []byte{0, 3, 1}},
		{Key: good.AppendTo(nil), Value: val.AppendTo(nil)},
	})
	if _, err := log.Append(context.Background(), p, batch); err != nil {
		t.Fatal(err)
	}
	c := startCoordinator(t, log, testGroupConfig())
	waitLoaded(t, c.GroupCoordinator, "g")
	offs, code := c.FetchOffsets(context.Background(), "g", []kafka.TopicPartition{{Topic: "t"}}, true)
	if code != 0 || offs[0].Offset != 9 {
		t.Fatalf("after load: %+v %v", offs, kerr.ErrorForCode(code))
	}
}

// TestRequireStableWaitsForCommitsInFlight: a plain fetch answers from the
// durable offsets at once; a require_stable fetch waits for the commit in
// flight and sees it.
func TestRequireStableWaitsForCommitsInFlight(t *testing.T) {
	log := runtimetest.NewMemLog()
	c := startCoordinator(t, log, testGroupConfig())
	ctx := context.Background()
	waitLoaded(t, c.GroupCoordinator, "g")
	gate := make(chan struct{})
	log.Hold(gate)
	tp := kafka.TopicPartition{Topic: "t"}
	committed := make(chan group.CommitResult, 1)
	go func() {
		committed <- c.CommitOffsets(ctx, group.CommitRequest{GroupID: "g", GenerationID: -1,
			Partitions: []group.CommitPartition{{TP: tp, Offset: 42, LeaderEpoch: -1}}})
	}()
	// Wait until the commit's append is held at the gate.
	testutil.Eventually(t, 5*time.Second, func() bool { return log.Held() > 0 }, "the commit's append held at the gate")
	if offs, _ := c.FetchOffsets(ctx, "g", []kafka.TopicPartition{tp}, false); offs[0].Offset != -1 {
		t.Fatalf("commit visible before it is durable: %+v", offs[0])
	}
	stable := make(chan []group.FetchedOffset, 1)
	go func() {
		offs, _ := c.FetchOffsets(ctx, "g", []kafka.TopicPartition{tp}, true)
		stable <- offs
	}()
	select {
	case offs := <-stable:
		t.Fatalf("require_stable fetch answered while a commit was in flight: %+v", offs)
	case <-time.After(50 * time.Millisecond):
	}
	close(gate)
	if res := <-committed; res.Errors[0] != 0 {
		t.Fatalf("commit: %v", kerr.ErrorForCode(res.Errors[0]))
	}
	if offs := <-stable; offs[0].Offset != 42 {
		t.Fatalf("require_stable fetch: %+v", offs[0])
	}
}

// TestNewLeaderEpochReloads: a new leader epoch on this node restarts the
// shard, which replays what the old one wrote.
func TestNewLeaderEpochReloads(t *testing.T) {
	log := runtimetest.NewMemLog()
	c := startCoordinator(t, log, testGroupConfig())
	ctx := context.Background()
	waitLoaded(t, c.GroupCoordinator, "g")
	tp := kafka.TopicPartition{Topic: "t"}
	if res := c.CommitOffsets(ctx, group.CommitRequest{GroupID: "g", GenerationID: -1,
		Partitions: []group.CommitPartition{{TP: tp, Offset: 5, LeaderEpoch: -1}}}); res.Errors[0] != 0 {
		t.Fatalf("commit: %v", kerr.ErrorForCode(res.Errors[0]))
	}
	p := c.PartitionFor("g")
	if epoch, ok := c.rt.LeaderEpoch(p); !ok || epoch != 0 {
		t.Fatalf("shard of epoch %d running: %v", epoch, ok)
	}
	c.image = offsetsImage(t, 3, testNode, 1)
	c.ApplyImage(c.image)
	// A shard's epoch is fixed for its life: epoch 1 is a new shard.
	if epoch, ok := c.rt.LeaderEpoch(p); !ok || epoch != 1 {
		t.Fatalf("shard not restarted on the new epoch")
	}
	waitLoaded(t, c.GroupCoordinator, "g")
	if offs, _ := c.FetchOffsets(ctx, "g", []kafka.TopicPartition{tp}, false); offs[0].Offset != 5 {
		t.Fatalf("after reload: %+v", offs[0])
	}
}
