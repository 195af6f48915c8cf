package api

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/auth"
	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// fakeOffsetsCoordinator answers fixed values and records what it was
// asked.
type fakeOffsetsCoordinator struct {
	describe    group.ShareGroupOffsets
	alter       group.AlterShareOffsetsResult
	del         group.ShareOffsetsDeleteResult
	calls       int
	gotDescribe []group.ShareOffsetsTopic
	gotAlter    []group.ShareOffsetsAlterTopic
	gotDelete   []string
}

func (f *fakeOffsetsCoordinator) DescribeShareGroupOffsets(_ context.Context, _ string, topics []group.ShareOffsetsTopic) group.ShareGroupOffsets {
	f.calls++
	f.gotDescribe = topics
	return f.describe
}

func (f *fakeOffsetsCoordinator) AlterShareGroupOffsets(_ context.Context, _ string, topics []group.ShareOffsetsAlterTopic) group.AlterShareOffsetsResult {
	f.calls++
	f.gotAlter = topics
	return f.alter
}

func (f *fakeOffsetsCoordinator) DeleteShareGroupOffsets(_ context.Context, _ string, topics []string) group.ShareOffsetsDeleteResult {
	f.calls++
	f.gotDelete = topics
	return f.del
}

func allow(az stubAuthorizer, op metadata.ACLOperation, t metadata.ACLResourceType, name string) {
	az[az.key(auth.User("alice"), op, t, name)] = true
}

// TestDescribeShareGroupOffsetsHandler: DESCRIBE on the group, then on
// each listed topic (refused ones answered -1 with
// TOPIC_AUTHORIZATION_FAILED after the others); all topics leaves the
// refused ones out; an empty list asks nothing.
func TestDescribeShareGroupOffsetsHandler(t *testing.T) {
	f := &fakeOffsetsCoordinator{describe: group.ShareGroupOffsets{GroupID: "sg", Topics: []group.TopicOffsets{
		{TopicName: "orders", TopicID: kafka.UUID{7}, Partitions: []group.PartitionOffsets{{Partition: 0, StartOffset: 4, LeaderEpoch: 1, Lag: 2}}},
		{TopicName: "secret", TopicID: kafka.UUID{8}, Partitions: []group.PartitionOffsets{{Partition: 0, StartOffset: 1, Lag: 0}}},
	}}}
	h := newDescribeShareGroupOffsetsHandler(f)
	az := stubAuthorizer{}
	call := func(version int16, topics []kmsg.DescribeShareGroupOffsetsRequestGroupTopic) kmsg.DescribeShareGroupOffsetsResponseGroup {
		b := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
		b.SetVersion(version)
		g := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
		g.GroupID, g.Topics = "sg", topics
		b.Groups = append(b.Groups, g)
		r := h.Handle(t.Context(), &Request{Body: b, Conn: shareConn(), authz: az}).body.(*kmsg.DescribeShareGroupOffsetsResponse)
		if r.Version != version || len(r.Groups) != 1 {
			t.Fatalf("response: %+v", r)
		}
		return r.Groups[0]
	}
	topic := func(name string, parts ...int32) kmsg.DescribeShareGroupOffsetsRequestGroupTopic {
		t := kmsg.NewDescribeShareGroupOffsetsRequestGroupTopic()
		t.Topic, t.Partitions = name, parts
		return t
	}
	if g := call(1, nil); g.ErrorCode != kerr.GroupAuthorizationFailed.Code || g.ErrorMessage != nil || f.calls != 0 {
		t.Fatalf("without DESCRIBE on the group: %+v (calls %d)", g, f.calls)
	}
	allow(az, metadata.ACLOpDescribe, metadata.ACLResourceGroup, "sg")
	allow(az, metadata.ACLOpDescribe, metadata.ACLResourceTopic, "orders")
	// All topics: the topic the principal may not describe is left out.
	g := call(1, nil)
	if g.ErrorCode != 0 || len(g.Topics) != 1 || g.Topics[0].Topic != "orders" || f.gotDescribe != nil {
		t.Fatalf("all topics: %+v asked %+v", g, f.gotDescribe)
	}
	if p := g.Topics[0].Partitions[0]; p.StartOffset != 4 || p.LeaderEpoch != 1 || p.Lag != 2 {
		t.Fatalf("partition: %+v", p)
	}
	// Listed: only the describable topics are asked for; the other answers
	// -1 and TOPIC_AUTHORIZATION_FAILED, last.
	f.describe.Topics = f.describe.Topics[:1]
	g = call(0, []kmsg.DescribeShareGroupOffsetsRequestGroupTopic{topic("secret", 0, 1), topic("orders", 0)})
	if len(f.gotDescribe) != 1 || f.gotDescribe[0].TopicName != "orders" {
		t.Fatalf("asked %+v", f.gotDescribe)
	}
	if len(g.Topics) != 2 || g.Topics[1].Topic != "secret" || len(g.Topics[1].Partitions) != 2 {
		t.Fatalf("listed: %+v", g)
	}
	if p := g.Topics[1].Partitions[1]; p.ErrorCode != kerr.TopicAuthorizationFailed.Code || p.StartOffset != -1 || p.ErrorMessage == nil || p.Partition != 1 {
		t.Fatalf("refused partition: %+v", p)
	}
	before := f.calls
	if g := call(1, []kmsg.DescribeShareGroupOffsetsRequestGroupTopic{}); g.ErrorCode != 0 || len(g.Topics) != 0 || f.calls != before {
		t.Fatalf("empty list: %+v", g)
	}
	// The coordinator's error is the group's, with Kafka's message; the
	// refused topics are not added.
	f.describe = group.ShareGroupOffsets{ErrorCode: kerr.NotCoordinator.Code}
	g = call(1, []kmsg.DescribeShareGroupOffsetsRequestGroupTopic{topic("secret", 0)})
	if g.ErrorCode != kerr.NotCoordinator.Code || g.ErrorMessage == nil || len(g.Topics) != 0 {
		t.Fatalf("coordinator error: %+v", g)
	}
}

// TestAlterShareGroupOffsetsHandler: READ on the group (else a
// group-level refusal with Kafka's message), READ on each topic and a
// known topic, before the coordinator; a coordinator error is the whole
// answer.
func TestAlterShareGroupOffsetsHandler(t *testing.T) {
	img := shareStateImage(t)
	f := &fakeOffsetsCoordinator{alter: group.AlterShareOffsetsResult{Topics: []group.TopicOutcome{
		{TopicName: "orders", TopicID: kafka.UUID{7}, Partitions: []group.PartitionOutcome{{Partition: 0}, {Partition: 9, ErrorCode: kerr.UnknownTopicOrPartition.Code}}},
	}}}
	h := newAlterShareGroupOffsetsHandler(f, func() *metadata.Image { return img })
	az := stubAuthorizer{}
	call := func() *kmsg.AlterShareGroupOffsetsResponse {
		b := kmsg.NewPtrAlterShareGroupOffsetsRequest()
		b.GroupID = "sg"
		for _, name := range []string{"secret", "orders", "nope"} {
			rt := kmsg.NewAlterShareGroupOffsetsRequestTopic()
			rt.Topic = name
			for _, p := range []int32{0, 9} {
				rp := kmsg.NewAlterShareGroupOffsetsRequestTopicPartition()
				rp.Partition, rp.StartOffset = p, 5
				rt.Partitions = append(rt.Partitions, rp)
			}
			b.Topics = append(b.Topics, rt)
		}
		return h.Handle(t.Context(), &Request{Body: b, Conn: shareConn(), authz: az}).body.(*kmsg.AlterShareGroupOffsetsResponse)
	}
	if r := call(); r.ErrorCode != kerr.GroupAuthorizationFailed.Code || r.ErrorMessage == nil || len(r.Topics) != 0 || f.calls != 0 {
		t.Fatalf("without READ on the group: %+v", r)
	}
	allow(az, metadata.ACLOpRead, metadata.ACLResourceGroup, "sg")
	allow(az, metadata.ACLOpRead, metadata.ACLResourceTopic, "orders")
	allow(az, metadata.ACLOpRead, metadata.ACLResourceTopic, "nope")
	r := call()
	if len(f.gotAlter) != 1 || f.gotAlter[0].TopicName != "orders" || len(f.gotAlter[0].Partitions) != 2 {
		t.Fatalf("asked %+v", f.gotAlter)
	}
	if r.ErrorCode != 0 || len(r.Topics) != 3 {
		t.Fatalf("answer: %+v", r)
	}
	want := []struct {
		name string
		code int16
	}{{"secret", kerr.TopicAuthorizationFailed.Code}, {"nope", kerr.UnknownTopicOrPartition.Code}, {"orders", 0}}
	for i, w := range want {
		rt := r.Topics[i]
		if rt.Topic != w.name || len(rt.Partitions) != 2 || rt.Partitions[0].ErrorCode != w.code {
			t.Fatalf("topic %d: %+v, want %s code %d", i, rt, w.name, w.code)
		}
	}
	if r.Topics[2].TopicID != (kafka.UUID{7}) || r.Topics[1].TopicID != ([16]byte{}) || r.Topics[2].Partitions[1].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("ids and coordinator partitions: %+v", r.Topics)
	}
	f.alter = group.AlterShareOffsetsResult{ErrorCode: kerr.NonEmptyGroup.Code, ErrorMessage: kmsg.StringPtr("The group is not empty.")}
	if r := call(); r.ErrorCode != kerr.NonEmptyGroup.Code || *r.ErrorMessage != "The group is not empty." || len(r.Topics) != 0 {
		t.Fatalf("coordinator error: %+v", r)
	}
}

// TestDeleteShareGroupOffsetsHandler: DELETE on the group (READ is not
// enough), READ on each topic; refused topics first.
func TestDeleteShareGroupOffsetsHandler(t *testing.T) {
	f := &fakeOffsetsCoordinator{del: group.ShareOffsetsDeleteResult{Topics: []group.DeletedTopicOutcome{{TopicName: "orders", TopicID: kafka.UUID{7}}}}}
	h := newDeleteShareGroupOffsetsHandler(f)
	az := stubAuthorizer{}
	call := func() *kmsg.DeleteShareGroupOffsetsResponse {
		b := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
		b.GroupID = "sg"
		for _, name := range []string{"orders", "secret"} {
			rt := kmsg.NewDeleteShareGroupOffsetsRequestTopic()
			rt.Topic = name
			b.Topics = append(b.Topics, rt)
		}
		return h.Handle(t.Context(), &Request{Body: b, Conn: shareConn(), authz: az}).body.(*kmsg.DeleteShareGroupOffsetsResponse)
	}
	allow(az, metadata.ACLOpRead, metadata.ACLResourceGroup, "sg")
	if r := call(); r.ErrorCode != kerr.GroupAuthorizationFailed.Code || r.ErrorMessage == nil || f.calls != 0 {
		t.Fatalf("READ but not DELETE on the group: %+v", r)
	}
	allow(az, metadata.ACLOpDelete, metadata.ACLResourceGroup, "sg")
	allow(az, metadata.ACLOpRead, metadata.ACLResourceTopic, "orders")
	r := call()
	if len(f.gotDelete) != 1 || f.gotDelete[0] != "orders" {
		t.Fatalf("asked %v", f.gotDelete)
	}
	if r.ErrorCode != 0 || len(r.Topics) != 2 || r.Topics[0].Topic != "secret" || r.Topics[0].ErrorCode != kerr.TopicAuthorizationFailed.Code ||
		r.Topics[1].Topic != "orders" || r.Topics[1].ErrorCode != 0 || r.Topics[1].TopicID != (kafka.UUID{7}) {
		t.Fatalf("answer: %+v", r)
	}
	f.del = group.ShareOffsetsDeleteResult{ErrorCode: kerr.GroupIDNotFound.Code, ErrorMessage: kmsg.StringPtr("Group sg not found.")}
	if r := call(); r.ErrorCode != kerr.GroupIDNotFound.Code || *r.ErrorMessage != "Group sg not found." || len(r.Topics) != 0 {
		t.Fatalf("coordinator error: %+v", r)
	}
}
