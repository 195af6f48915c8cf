package api

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/coordinator/groupcoord"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/records"
)

// memOffsetsLog is an in-memory runtime.PartitionWriter.
type memOffsetsLog struct {
	mu    sync.Mutex
	parts map[int32][][]byte
	next  map[int32]int64
}

func (l *memOffsetsLog) Append(_ context.Context, partition int32, batch []byte) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h, err := records.ParseHeader(batch)
	if err != nil {
		return 0, err
	}
	b := append([]byte(nil), batch...)
	records.SetBaseOffset(b, l.next[partition])
	l.parts[partition] = append(l.parts[partition], b)
	l.next[partition] += int64(h.LastOffsetDelta) + 1
	return l.next[partition] - 1, nil
}

func (l *memOffsetsLog) Read(_ context.Context, partition int32, offset int64, _ int32) ([]byte, int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []byte
	for _, b := range l.parts[partition] {
		if h, err := records.ParseHeader(b); err == nil && h.LastOffset() >= offset {
			out = append(out, b...)
		}
	}
	return out, l.next[partition], nil
}

// groupFixture is a registry serving the group APIs over a real
// coordinator, a fake control plane's image and an in-memory offsets log.
type groupFixture struct {
	f     *fakeController
	mu    sync.Mutex
	coord *groupcoord.GroupCoordinator
	reg   *Registry
}

func newGroupFixture(t *testing.T) *groupFixture {
	t.Helper()
	gf := &groupFixture{f: newFakeController(t, 1)}
	gf.f.createTopic("t", 2)
	image := func() *metadata.Image {
		gf.mu.Lock()
		defer gf.mu.Unlock()
		return gf.f.image
	}
	cfg := group.DefaultConfig()
	cfg.InitialRebalanceDelay = 0
	c, err := groupcoord.New(groupcoord.Options{
		NodeID: 1, Group: cfg, NumPartitions: 3, ReplicationFactor: 1,
		Writer: &memOffsetsLog{parts: map[int32][][]byte{}, next: map[int32]int64{}},
		Image:  image, TickInterval: 5 * time.Millisecond,
		CreateTopic: func(_ context.Context, name string, n int32, _ int16, _ map[string]string) error {
			gf.mu.Lock()
			gf.f.createTopic(name, n)
			gf.mu.Unlock()
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	gf.coord = c
	gf.reg, err = NewRegistry(BrokerRelease(), RegistryInfo{}, BrokerHandlers(BrokerDeps{
		Groups: &GroupPlaneDeps{Coordinator: c, Image: image},
	}))
	if err != nil {
		t.Fatal(err)
	}
	return gf
}

// findCoordinator asks until the coordinator is ready, as clients do.
func (gf *groupFixture) findCoordinator(t *testing.T, key string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.SetVersion(4)
		req.CoordinatorKeys = []string{key}
		resp := reply[*kmsg.FindCoordinatorResponse](t, gf.reg, req)
		c := resp.Coordinators[0]
		if c.ErrorCode == 0 {
			if c.NodeID != 1 || c.Host != "h" || c.Port != 9001 {
				t.Fatalf("coordinator %+v", c)
			}
			// The shard may still load: wait until a heartbeat is answered.
			gf.coord.ApplyImage(gf.f.image)
			hb := kmsg.NewPtrHeartbeatRequest()
			hb.Group, hb.MemberID = key, "x"
			// (Kafka answers heartbeats blindly while loading.)
			if r := reply[*kmsg.HeartbeatResponse](t, gf.reg, hb); r.ErrorCode == kerr.UnknownMemberID.Code || r.ErrorCode == kerr.InvalidGroupID.Code {
				return
			}
		} else if c.ErrorCode != kerr.CoordinatorNotAvailable.Code {
			t.Fatalf("find coordinator: %v", kerr.ErrorForCode(c.ErrorCode))
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatal("coordinator never became available")
}

func joinRequest(version int16, memberID string) *kmsg.JoinGroupRequest {
	req := kmsg.NewPtrJoinGroupRequest()
	req.SetVersion(version)
	req.Group, req.MemberID, req.ProtocolType = "g", memberID, "consumer"
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 10000, 10000
	sub := kmsg.NewConsumerMemberMetadata()
	sub.Topics = []string{"t"}
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name, p.Metadata = "range", sub.AppendTo(nil)
	req.Protocols = append(req.Protocols, p)
	return req
}

func TestGroupHandlersEndToEnd(t *testing.T) {
	gf := newGroupFixture(t)
	gf.findCoordinator(t, "g")

	// v9: MEMBER_ID_REQUIRED first, then the join completes alone.
	first := reply[*kmsg.JoinGroupResponse](t, gf.reg, joinRequest(9, ""))
	if first.ErrorCode != kerr.MemberIDRequired.Code || first.MemberID == "" {
		t.Fatalf("first join: %+v", first)
	}
	joined := reply[*kmsg.JoinGroupResponse](t, gf.reg, joinRequest(9, first.MemberID))
	if joined.ErrorCode != 0 || joined.Generation != 1 || joined.LeaderID != first.MemberID || len(joined.Members) != 1 ||
		*joined.Protocol != "range" || *joined.ProtocolType != "consumer" {
		t.Fatalf("join: %+v", joined)
	}

	sync := kmsg.NewPtrSyncGroupRequest()
	sync.SetVersion(5)
	sync.Group, sync.MemberID, sync.Generation = "g", first.MemberID, 1
	sync.ProtocolType, sync.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("range")
	sync.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: first.MemberID, MemberAssignment: []byte("A")}}
	if sr := reply[*kmsg.SyncGroupResponse](t, gf.reg, sync); sr.ErrorCode != 0 || string(sr.MemberAssignment) != "A" || *sr.Protocol != "range" {
		t.Fatalf("sync: %+v", sr)
	}

	// Commit: a stale generation, a nonexistent partition, oversized
	// metadata and a good one.
	commit := func(version int16, gen int32, topic string, partition int32, md string) int16 {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.SetVersion(version)
		req.Group, req.MemberID, req.Generation = "g", first.MemberID, gen
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = topic
		if id, ok := gf.f.image.Topic(topic); ok && version >= 10 {
			rt.TopicID = id.ID
		}
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.Metadata, rp.LeaderEpoch = partition, 42, &md, 5
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return reply[*kmsg.OffsetCommitResponse](t, gf.reg, req).Topics[0].Partitions[0].ErrorCode
	}
	for _, c := range []struct {
		version int16
		gen     int32
		topic   string
		part    int32
		md      string
		want    int16
	}{
		{8, 0, "t", 0, "", kerr.IllegalGeneration.Code},
		{8, 1, "nope", 0, "", kerr.UnknownTopicOrPartition.Code},
		{8, 1, "t", 7, "", kerr.UnknownTopicOrPartition.Code},
		{10, 1, "nope", 0, "", kerr.UnknownTopicID.Code},
		{8, 1, "t", 0, string(make([]byte, 5000)), kerr.OffsetMetadataTooLarge.Code},
		{8, 1, "t", 0, "meta", 0},
		{10, 1, "t", 1, "by-id", 0},
	} {
		if got := commit(c.version, c.gen, c.topic, c.part, c.md); got != c.want {
			t.Errorf("commit v%d gen %d %s/%d: %v, want %v", c.version, c.gen, c.topic, c.part, kerr.ErrorForCode(got), kerr.ErrorForCode(c.want))
		}
	}

	// Fetch: v8 multi-group (one unknown), v1 single.
	fetch := kmsg.NewPtrOffsetFetchRequest()
	fetch.SetVersion(8)
	fetch.RequireStable = true
	fetch.Groups = []kmsg.OffsetFetchRequestGroup{
		{Group: "g", Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: "t", Partitions: []int32{0, 1}}}},
		{Group: "unknown"},
	}
	fr := reply[*kmsg.OffsetFetchResponse](t, gf.reg, fetch)
	if len(fr.Groups) != 2 || fr.Groups[0].ErrorCode != 0 {
		t.Fatalf("fetch v8: %+v", fr)
	}
	ps := fr.Groups[0].Topics[0].Partitions
	if ps[0].Offset != 42 || *ps[0].Metadata != "meta" || ps[0].LeaderEpoch != 5 || ps[1].Offset != 42 || *ps[1].Metadata != "by-id" {
		t.Fatalf("fetch v8 partitions: %+v", ps)
	}
	if len(fr.Groups[1].Topics) != 0 {
		t.Fatalf("unknown group has offsets: %+v", fr.Groups[1])
	}
	fetch1 := kmsg.NewPtrOffsetFetchRequest()
	fetch1.SetVersion(1)
	fetch1.Group = "g"
	fetch1.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "t", Partitions: []int32{0}}}
	if fr := reply[*kmsg.OffsetFetchResponse](t, gf.reg, fetch1); fr.Topics[0].Partitions[0].Offset != 42 {
		t.Fatalf("fetch v1: %+v", fr)
	}

	// Describe, list with filters.
	desc := kmsg.NewPtrDescribeGroupsRequest()
	desc.SetVersion(6)
	desc.Groups = []string{"g", "missing"}
	desc.IncludeAuthorizedOperations = true
	dr := reply[*kmsg.DescribeGroupsResponse](t, gf.reg, desc)
	if g := dr.Groups[0]; g.State != "Stable" || g.Protocol != "range" || len(g.Members) != 1 || string(g.Members[0].MemberAssignment) != "A" || g.AuthorizedOperations != allGroupOperations {
		t.Fatalf("describe: %+v", g)
	}
	if g := dr.Groups[1]; g.ErrorCode != kerr.GroupIDNotFound.Code || g.State != "Dead" || *g.ErrorMessage != "Group missing not found." {
		t.Fatalf("describe missing: %+v", g)
	}
	desc.SetVersion(5)
	if g := reply[*kmsg.DescribeGroupsResponse](t, gf.reg, desc).Groups[1]; g.ErrorCode != 0 || g.State != "Dead" {
		t.Fatalf("describe missing v5: %+v", g)
	}
	list := kmsg.NewPtrListGroupsRequest()
	list.SetVersion(5)
	list.StatesFilter = []string{"stable"}
	if lr := reply[*kmsg.ListGroupsResponse](t, gf.reg, list); len(lr.Groups) != 1 || lr.Groups[0].GroupType != "classic" {
		t.Fatalf("list stable: %+v", lr)
	}
	list.StatesFilter, list.TypesFilter = nil, []string{"consumer"}
	if lr := reply[*kmsg.ListGroupsResponse](t, gf.reg, list); len(lr.Groups) != 0 {
		t.Fatalf("list consumer-type: %+v", lr)
	}

	// Deleting a group with members, and offsets of a subscribed topic,
	// are refused.
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.SetVersion(2)
	del.Groups = []string{"g", "missing"}
	delr := reply[*kmsg.DeleteGroupsResponse](t, gf.reg, del)
	if delr.Groups[0].ErrorCode != kerr.NonEmptyGroup.Code || delr.Groups[1].ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("delete groups: %+v", delr)
	}
	od := kmsg.NewPtrOffsetDeleteRequest()
	od.Group = "g"
	od.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}}
	if r := reply[*kmsg.OffsetDeleteResponse](t, gf.reg, od); r.ErrorCode != 0 || r.Topics[0].Partitions[0].ErrorCode != kerr.GroupSubscribedToTopic.Code {
		t.Fatalf("offset delete: %+v", r)
	}

	// Heartbeat, leave (v0 and v3 batched), then delete.
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID, hb.Generation = "g", first.MemberID, 1
	if r := reply[*kmsg.HeartbeatResponse](t, gf.reg, hb); r.ErrorCode != 0 {
		t.Fatalf("heartbeat: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	leave0 := kmsg.NewPtrLeaveGroupRequest()
	leave0.Group, leave0.MemberID = "g", "nobody"
	if r := reply[*kmsg.LeaveGroupResponse](t, gf.reg, leave0); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("leave v0: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.SetVersion(5)
	leave.Group = "g"
	leave.Members = []kmsg.LeaveGroupRequestMember{{MemberID: first.MemberID}, {MemberID: "nobody"}}
	lr := reply[*kmsg.LeaveGroupResponse](t, gf.reg, leave)
	if lr.ErrorCode != 0 || lr.Members[0].ErrorCode != 0 || lr.Members[1].ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("leave v5: %+v", lr)
	}
	if r := reply[*kmsg.OffsetDeleteResponse](t, gf.reg, od); r.ErrorCode != 0 || r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("offset delete after leave: %+v", r)
	}
	delr = reply[*kmsg.DeleteGroupsResponse](t, gf.reg, del)
	if delr.Groups[0].ErrorCode != 0 {
		t.Fatalf("delete after leave: %v", kerr.ErrorForCode(delr.Groups[0].ErrorCode))
	}
}

func TestFindCoordinatorKeyTypes(t *testing.T) {
	gf := newGroupFixture(t)
	gf.findCoordinator(t, "g")
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.SetVersion(3)
	req.CoordinatorKey, req.CoordinatorType = "txn", 1
	if r := reply[*kmsg.FindCoordinatorResponse](t, gf.reg, req); r.ErrorCode != kerr.InvalidRequest.Code || r.NodeID != -1 ||
		r.ErrorMessage == nil || *r.ErrorMessage != transactionsUnsupported {
		t.Fatalf("transaction key: %+v", r)
	}
	req.SetVersion(0)
	req.CoordinatorKey = "g"
	if r := reply[*kmsg.FindCoordinatorResponse](t, gf.reg, req); r.ErrorCode != 0 || r.Port != 9001 {
		t.Fatalf("v0: %+v", r)
	}
	req.SetVersion(6)
	req.CoordinatorType = 5
	req.CoordinatorKeys = []string{"a"}
	if r := reply[*kmsg.FindCoordinatorResponse](t, gf.reg, req); r.Coordinators[0].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("unknown key type: %+v", r)
	}
}

func TestJoinGroupV0BlocksForRebalance(t *testing.T) {
	gf := newGroupFixture(t)
	gf.findCoordinator(t, "g")
	a := reply[*kmsg.JoinGroupResponse](t, gf.reg, joinRequest(0, ""))
	if a.ErrorCode != 0 || a.Generation != 1 {
		t.Fatalf("v0 join: %+v", a)
	}
	// A second v0 member: its join waits until the first rejoins.
	done := make(chan *kmsg.JoinGroupResponse, 1)
	go func() { done <- reply[*kmsg.JoinGroupResponse](t, gf.reg, joinRequest(0, "")) }()
	deadline := time.Now().Add(5 * time.Second)
	for gf.coord.DescribeGroup(context.Background(), "g").State != group.PreparingRebalance {
		if time.Now().After(deadline) {
			t.Fatal("no rebalance")
		}
		time.Sleep(time.Millisecond)
	}
	a2 := reply[*kmsg.JoinGroupResponse](t, gf.reg, joinRequest(0, a.MemberID))
	b := <-done
	if a2.Generation != 2 || b.Generation != 2 || b.ErrorCode != 0 || len(a2.Members) != 2 {
		t.Fatalf("rebalance: %+v %+v", a2, b)
	}
}

// TestGroupRequestsEdgeCases: Kafka's answers for empty group ids, leaving
// a group that does not exist, and a commit to an empty group id.
func TestGroupRequestsEdgeCases(t *testing.T) {
	gf := newGroupFixture(t)
	gf.findCoordinator(t, "g")
	gf.findCoordinator(t, "")

	hb := kmsg.NewPtrHeartbeatRequest()
	hb.MemberID = "m"
	if r := reply[*kmsg.HeartbeatResponse](t, gf.reg, hb); r.ErrorCode != kerr.InvalidGroupID.Code {
		t.Fatalf("heartbeat without group: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.MemberID = "m"
	if r := reply[*kmsg.SyncGroupResponse](t, gf.reg, sync); r.ErrorCode != kerr.InvalidGroupID.Code {
		t.Fatalf("sync without group: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	join := joinRequest(5, "")
	join.Group = ""
	if r := reply[*kmsg.JoinGroupResponse](t, gf.reg, join); r.ErrorCode != kerr.InvalidGroupID.Code {
		t.Fatalf("join without group: %v", kerr.ErrorForCode(r.ErrorCode))
	}

	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.SetVersion(3)
	leave.Group = "nope"
	leave.Members = []kmsg.LeaveGroupRequestMember{{MemberID: "a"}, {MemberID: "b"}}
	lr := reply[*kmsg.LeaveGroupResponse](t, gf.reg, leave)
	if lr.ErrorCode != 0 || len(lr.Members) != 2 || lr.Members[1].ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("leave unknown group v3: %+v", lr)
	}
	leave0 := kmsg.NewPtrLeaveGroupRequest()
	leave0.Group, leave0.MemberID = "nope", "a"
	if r := reply[*kmsg.LeaveGroupResponse](t, gf.reg, leave0); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("leave unknown group v0: %v", kerr.ErrorForCode(r.ErrorCode))
	}

	// Kafka treats an empty group id in OffsetCommit as a group that does
	// not exist: GROUP_ID_NOT_FOUND from v9, ILLEGAL_GENERATION before.
	for version, want := range map[int16]int16{8: kerr.IllegalGeneration.Code, 9: kerr.GroupIDNotFound.Code} {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.SetVersion(version)
		req.MemberID, req.Generation = "m", 1
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = "t"
		rt.Partitions = []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1}}
		req.Topics = append(req.Topics, rt)
		if got := reply[*kmsg.OffsetCommitResponse](t, gf.reg, req).Topics[0].Partitions[0].ErrorCode; got != want {
			t.Errorf("commit v%d to empty group id: %v, want %v", version, kerr.ErrorForCode(got), kerr.ErrorForCode(want))
		}
	}
}
