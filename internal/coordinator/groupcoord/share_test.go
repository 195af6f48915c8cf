package groupcoord

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/coordinator/runtime/runtimetest"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/testutil"
)

// fakePersister records the share state calls and fails while fail is set.
type fakePersister struct {
	mu      sync.Mutex
	fail    error
	inits   []group.ShareStateRequest
	deletes []group.ShareStateRequest
}

func (f *fakePersister) InitializeState(_ context.Context, req group.ShareStateRequest) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inits = append(f.inits, req)
	return f.fail
}

func (f *fakePersister) DeleteState(_ context.Context, req group.ShareStateRequest) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deletes = append(f.deletes, req)
	return f.fail
}

func (f *fakePersister) calls() (int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.inits), len(f.deletes)
}

// shareImage is offsetsImage with a user topic "t" of two partitions.
func shareImage(t *testing.T) *metadata.Image {
	t.Helper()
	d := metadata.NewDelta(offsetsImage(t, 3, testNode, 0))
	id := kafka.UUID{9}
	recs := []metadata.Record{&metadata.TopicRecord{Name: "t", TopicID: id}}
	for p := range int32(2) {
		recs = append(recs, &metadata.PartitionRecord{TopicID: id, Partition: p, Replicas: []int32{testNode}, ISR: []int32{testNode}, Leader: testNode})
	}
	for i, r := range recs {
		if err := d.Replay(int64(100+i), 1, r); err != nil {
			t.Fatal(err)
		}
	}
	return d.Apply()
}

func startShareCoordinator(t *testing.T, log *runtimetest.MemLog, p SharePersister) *testCoordinator {
	t.Helper()
	cfg := testGroupConfig()
	// Targets at every epoch change, so the steps need no waiting for
	// group.share.assignment.interval.ms (the group package tests it).
	cfg.Share = group.ShareConfig{AssignmentInterval: -1}
	tc := startCoordinator(t, log, cfg)
	tc.image = shareImage(t)
	tc.ApplyImage(tc.image)
	tc.SetSharePersister(p)
	waitLoaded(t, tc.GroupCoordinator, "sg")
	return tc
}

func shareHB(member string, epoch int32, topics ...string) group.ShareHeartbeatRequest {
	return group.ShareHeartbeatRequest{GroupID: "sg", MemberID: member, MemberEpoch: epoch, SubscribedTopicNames: topics, ClientID: "c", ClientHost: "/127.0.0.1"}
}

// TestShareHeartbeatInitializesThenAssigns: the first heartbeat is
// answered with no partitions, the persister initializes the topic after
// the answer, and the next heartbeat gets both partitions; the group
// survives a restart from the log.
func TestShareHeartbeatInitializesThenAssigns(t *testing.T) {
	log := runtimetest.NewMemLog()
	p := &fakePersister{}
	c := startShareCoordinator(t, log, p)
	ctx := context.Background()
	res := c.ShareGroupHeartbeat(ctx, shareHB("m1", 0, "t"))
	if res.ErrorCode != 0 || res.MemberEpoch != 2 || len(res.Assignment) != 0 || res.Assignment == nil {
		t.Fatalf("join: %+v", res)
	}
	c.share.inflight.Wait()
	if n, _ := p.calls(); n != 1 || p.inits[0].GroupEpoch != 2 || len(p.inits[0].Topics) != 1 || len(p.inits[0].Topics[0].Partitions) != 2 {
		t.Fatalf("initializations: %+v", p.inits)
	}
	res = c.ShareGroupHeartbeat(ctx, shareHB("m1", 2))
	if res.ErrorCode != 0 || res.MemberEpoch != 3 || len(res.Assignment) != 1 || len(res.Assignment[0].Partitions) != 2 {
		t.Fatalf("after initialization: %+v", res)
	}
	d := c.ShareGroupDescribe(ctx, "sg")
	if d.ErrorCode != 0 || d.State != "Stable" || d.AssignorName != "simple" || len(d.Members) != 1 || d.Members[0].Assignment[0].TopicName != "t" {
		t.Fatalf("describe: %+v", d)
	}
	groups, code := c.ListGroups(ctx)
	if code != 0 || len(groups) != 1 || groups[0].Type != "share" || groups[0].State != "Stable" {
		t.Fatalf("list: %+v %d", groups, code)
	}

	c.Close()
	c2 := startShareCoordinator(t, log, p)
	if d2 := c2.ShareGroupDescribe(ctx, "sg"); d2.GroupEpoch != 3 || len(d2.Members) != 1 || len(d2.Members[0].Assignment) != 1 {
		t.Fatalf("after restart: %+v", d2)
	}
	if res := c2.ShareGroupHeartbeat(ctx, shareHB("m1", 3)); res.ErrorCode != 0 || res.MemberEpoch != 3 {
		t.Fatalf("heartbeat after restart: %+v", res)
	}
}

// TestShareInitializeFailureRetries: a failed initialization sends the
// partitions back, and the next heartbeat asks again.
func TestShareInitializeFailureRetries(t *testing.T) {
	p := &fakePersister{fail: errors.New("share coordinator unavailable")}
	c := startShareCoordinator(t, runtimetest.NewMemLog(), p)
	ctx := context.Background()
	if res := c.ShareGroupHeartbeat(ctx, shareHB("m1", 0, "t")); res.ErrorCode != 0 {
		t.Fatalf("join: %+v", res)
	}
	c.share.inflight.Wait()
	p.mu.Lock()
	p.fail = nil
	p.mu.Unlock()
	if res := c.ShareGroupHeartbeat(ctx, shareHB("m1", 2)); res.ErrorCode != 0 || len(res.Assignment) != 0 {
		t.Fatalf("second heartbeat: %+v", res)
	}
	c.share.inflight.Wait()
	if n, _ := p.calls(); n != 2 {
		t.Fatalf("%d initializations, want 2 (the retry)", n)
	}
	testutil.Eventually(t, 5*time.Second, func() bool {
		res := c.ShareGroupHeartbeat(ctx, shareHB("m1", 2))
		return res.ErrorCode == 0 && res.MemberEpoch == 3 && len(res.Assignment) == 1
	}, "partitions assigned after the retry")
}

// TestShareDeleteGroup: DeleteGroups of a share group with members is
// NON_EMPTY_GROUP; once empty, the persister deletes its state and the
// group goes. A persister error keeps the group.
func TestShareDeleteGroup(t *testing.T) {
	p := &fakePersister{}
	c := startShareCoordinator(t, runtimetest.NewMemLog(), p)
	ctx := context.Background()
	c.ShareGroupHeartbeat(ctx, shareHB("m1", 0, "t"))
	c.share.inflight.Wait()
	if code := c.DeleteGroup(ctx, "sg"); code != kerr.NonEmptyGroup.Code {
		t.Fatalf("delete with a member: %v", kerr.ErrorForCode(code))
	}
	if res := c.ShareGroupHeartbeat(ctx, shareHB("m1", -1)); res.ErrorCode != 0 || res.MemberEpoch != -1 {
		t.Fatalf("leave: %+v", res)
	}
	p.mu.Lock()
	p.fail = kerr.CoordinatorNotAvailable
	p.mu.Unlock()
	if code := c.DeleteGroup(ctx, "sg"); code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("delete with the persister failing: %v", kerr.ErrorForCode(code))
	}
	p.mu.Lock()
	p.fail = nil
	p.mu.Unlock()
	if code := c.DeleteGroup(ctx, "sg"); code != 0 {
		t.Fatalf("delete: %v", kerr.ErrorForCode(code))
	}
	if _, n := p.calls(); n != 2 || len(p.deletes[1].Topics) != 1 {
		t.Fatalf("deletes: %+v", p.deletes)
	}
	if d := c.ShareGroupDescribe(ctx, "sg"); d.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("describe after delete: %+v", d)
	}
	if code := c.DeleteGroup(ctx, "sg"); code != kerr.GroupIDNotFound.Code {
		t.Fatalf("second delete: %v", kerr.ErrorForCode(code))
	}
}

// TestShareHeartbeatInvalid: refused before the shard, with Kafka's
// message.
func TestShareHeartbeatInvalid(t *testing.T) {
	c := startShareCoordinator(t, runtimetest.NewMemLog(), nil)
	res := c.ShareGroupHeartbeat(context.Background(), shareHB("", 0, "t"))
	if res.ErrorCode != kerr.InvalidRequest.Code || res.ErrorMessage == nil || *res.ErrorMessage != "MemberId can't be empty." {
		t.Fatalf("%+v", res)
	}
}
