package api

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/auth"
	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// fakeShareCoordinator answers from fixed values and counts the calls.
type fakeShareCoordinator struct {
	hb       group.ShareHeartbeatResult
	describe map[string]group.ShareGroupDescription
	got      []group.ShareHeartbeatRequest
}

func (f *fakeShareCoordinator) ShareGroupHeartbeat(_ context.Context, req group.ShareHeartbeatRequest) group.ShareHeartbeatResult {
	f.got = append(f.got, req)
	return f.hb
}

func (f *fakeShareCoordinator) ShareGroupDescribe(_ context.Context, id string) group.ShareGroupDescription {
	if d, ok := f.describe[id]; ok {
		return d
	}
	msg := "Group " + id + " not found."
	return group.ShareGroupDescription{GroupID: id, ErrorCode: kerr.GroupIDNotFound.Code, ErrorMessage: &msg}
}

func shareConn() *ConnState {
	return &ConnState{Principal: auth.User("alice"), RemoteAddr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1)}}
}

func shareHBBody(member string, topics ...string) *kmsg.ShareGroupHeartbeatRequest {
	b := kmsg.NewPtrShareGroupHeartbeatRequest()
	b.SetVersion(1)
	b.GroupID, b.MemberID, b.SubscribedTopicNames = "sg", member, topics
	return b
}

// TestShareGroupHeartbeatAuthorization: READ on the group, then a valid
// member id, then DESCRIBE on every subscribed topic, as Kafka's order;
// the coordinator is asked only when all pass.
func TestShareGroupHeartbeatAuthorization(t *testing.T) {
	topic := kafka.UUID{7}
	f := &fakeShareCoordinator{hb: group.ShareHeartbeatResult{MemberID: "m1", MemberEpoch: 2, HeartbeatInterval: 5 * time.Second,
		Assignment: []group.TopicPartitions{{TopicID: topic, Partitions: []int32{0, 1}}}}}
	h := newShareGroupHeartbeatHandler(f)
	az := stubAuthorizer{}
	alice := auth.User("alice")
	call := func(body *kmsg.ShareGroupHeartbeatRequest) *kmsg.ShareGroupHeartbeatResponse {
		return h.Handle(t.Context(), &Request{Body: body, Conn: shareConn(), authz: az}).body.(*kmsg.ShareGroupHeartbeatResponse)
	}
	if r := call(shareHBBody("m1", "a")); r.ErrorCode != kerr.GroupAuthorizationFailed.Code || r.ErrorMessage != nil {
		t.Fatalf("without READ on the group: %+v", r)
	}
	az[az.key(alice, metadata.ACLOpRead, metadata.ACLResourceGroup, "sg")] = true
	if r := call(shareHBBody("", "a")); r.ErrorCode != kerr.InvalidRequest.Code || r.ErrorMessage != nil {
		t.Fatalf("empty member id: %+v", r)
	}
	if r := call(shareHBBody("0123456789012345678901234567890123456", "a")); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("37-character member id: %+v", r)
	}
	if r := call(shareHBBody("m1", "a", "b")); r.ErrorCode != kerr.TopicAuthorizationFailed.Code || r.ErrorMessage != nil {
		t.Fatalf("without DESCRIBE on the topics: %+v", r)
	}
	az[az.key(alice, metadata.ACLOpDescribe, metadata.ACLResourceTopic, "a")] = true
	if r := call(shareHBBody("m1", "a", "b")); r.ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("without DESCRIBE on one topic: %+v", r)
	}
	if len(f.got) != 0 {
		t.Fatalf("coordinator asked for a refused request: %+v", f.got)
	}
	az[az.key(alice, metadata.ACLOpDescribe, metadata.ACLResourceTopic, "b")] = true
	r := call(shareHBBody("m1", "a", "b"))
	if r.ErrorCode != 0 || *r.MemberID != "m1" || r.MemberEpoch != 2 || r.HeartbeatIntervalMillis != 5000 ||
		r.Assignment == nil || len(r.Assignment.TopicPartitions) != 1 || r.Assignment.TopicPartitions[0].TopicID != topic {
		t.Fatalf("authorized: %+v", r)
	}
	if len(f.got) != 1 || f.got[0].ClientHost != "/10.0.0.1" {
		t.Fatalf("request: %+v", f.got)
	}
	// An epoch-only heartbeat names no topics: nothing more to authorize.
	if r := call(shareHBBody("m1")); r.ErrorCode != 0 {
		t.Fatalf("heartbeat without topics: %+v", r)
	}
	// A coordinator error keeps the member id null and carries a message.
	f.hb = group.ShareHeartbeatResult{ErrorCode: kerr.FencedMemberEpoch.Code}
	if r := call(shareHBBody("m1")); r.ErrorCode != kerr.FencedMemberEpoch.Code || r.MemberID != nil || r.ErrorMessage == nil {
		t.Fatalf("coordinator error: %+v", r)
	}
}

// TestShareGroupDescribeAuthorization: DESCRIBE on each group; a group
// assigned topics the principal may not describe is
// TOPIC_AUTHORIZATION_FAILED without members; unknown groups are
// GROUP_ID_NOT_FOUND.
func TestShareGroupDescribeAuthorization(t *testing.T) {
	topic := kafka.UUID{7}
	f := &fakeShareCoordinator{describe: map[string]group.ShareGroupDescription{
		"sg": {GroupID: "sg", State: "Stable", GroupEpoch: 3, AssignmentEpoch: 3, AssignorName: "simple", Members: []group.ShareMemberDescription{{
			MemberID: "m1", MemberEpoch: 3, ClientID: "c", ClientHost: "/10.0.0.1", SubscribedTopicNames: []string{"a"},
			Assignment: []group.DescribedPartitions{{TopicID: topic, TopicName: "a", Partitions: []int32{0}}},
		}}},
	}}
	h := newShareGroupDescribeHandler(f)
	az := stubAuthorizer{}
	alice := auth.User("alice")
	call := func(ids ...string) []kmsg.ShareGroupDescribeResponseGroup {
		body := kmsg.NewPtrShareGroupDescribeRequest()
		body.SetVersion(1)
		body.GroupIDs, body.IncludeAuthorizedOperations = ids, true
		return h.Handle(t.Context(), &Request{Body: body, Conn: shareConn(), authz: az}).body.(*kmsg.ShareGroupDescribeResponse).Groups
	}
	if g := call("sg")[0]; g.ErrorCode != kerr.GroupAuthorizationFailed.Code {
		t.Fatalf("without DESCRIBE on the group: %+v", g)
	}
	az[az.key(alice, metadata.ACLOpDescribe, metadata.ACLResourceGroup, "sg")] = true
	az[az.key(alice, metadata.ACLOpDescribe, metadata.ACLResourceGroup, "nope")] = true
	g := call("sg")[0]
	if g.ErrorCode != kerr.TopicAuthorizationFailed.Code || len(g.Members) != 0 || g.ErrorMessage == nil {
		t.Fatalf("without DESCRIBE on the assigned topic: %+v", g)
	}
	az[az.key(alice, metadata.ACLOpDescribe, metadata.ACLResourceTopic, "a")] = true
	gs := call("sg", "nope")
	g = gs[0]
	if g.ErrorCode != 0 || g.GroupState != "Stable" || g.Assignor != "simple" || g.GroupEpoch != 3 || len(g.Members) != 1 ||
		g.Members[0].Assignment.TopicPartitions[0].Topic != "a" || g.Members[0].SubscribedTopicNames[0] != "a" {
		t.Fatalf("described: %+v", g)
	}
	if gs[1].ErrorCode != kerr.GroupIDNotFound.Code || *gs[1].ErrorMessage != "Group nope not found." {
		t.Fatalf("unknown group: %+v", gs[1])
	}
}
