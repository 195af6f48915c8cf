package api

// OffsetFetch (key 9), versions 1-10: the pinned Kafka release's range
// (KIP-896 removed v0).
//
// v8+ fetches several groups; v10 names topics by id. Null topics mean all
// of the group's offsets. A group that does not exist has no offsets (-1),
// without an error, as in Kafka. With require_stable (v7+) the answer waits
// for the coordinator's writes in flight, as Kafka's does (it runs such a
// fetch as a write operation), so commits not yet durable are seen once they
// are; there are no pending transactional commits while transactions are
// not built. Group-level errors (NOT_COORDINATOR,
// COORDINATOR_LOAD_IN_PROGRESS) are the response's error from v2 and each
// partition's in v1.
//
// Authorization as Kafka's: DESCRIBE on each group (else
// GROUP_AUTHORIZATION_FAILED for it), DESCRIBE on each requested topic
// (else TOPIC_AUTHORIZATION_FAILED on its partitions); topics the principal
// may not describe are left out of an all-offsets answer.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

func newOffsetFetchHandler(gd *GroupPlaneDeps) Handler {
	return Handler{
		Key: 9, MinVersion: 1, MaxVersion: 10,
		Handle: func(ctx context.Context, req *Request) Response {
			az := offsetFetchAuth{
				group: func(g string) bool { return req.authorize(opDescribe, resGroup, g) },
				topic: req.topicCheck(opDescribe),
			}
			return Reply(offsetFetch(ctx, gd, req.Body.(*kmsg.OffsetFetchRequest), az))
		},
	}
}

// fetchTopic is one requested topic: its name (empty for an unknown id)
// and id.
type fetchTopic struct {
	name       string
	id         [16]byte
	partitions []int32
}

// offsetFetchAuth is what OffsetFetch asks the authorizer: DESCRIBE on a
// group and on a topic.
type offsetFetchAuth struct {
	group, topic func(string) bool
}

// allowAllOffsetFetch answers as without an authorizer.
var allowAllOffsetFetch = offsetFetchAuth{group: allowAll, topic: allowAll}

func offsetFetch(ctx context.Context, gd *GroupPlaneDeps, req *kmsg.OffsetFetchRequest, az offsetFetchAuth) *kmsg.OffsetFetchResponse {
	resp := kmsg.NewPtrOffsetFetchResponse()
	resp.SetVersion(req.Version)
	im := gd.image()
	if req.Version < 8 {
		var topics []fetchTopic
		if req.Topics != nil {
			topics = []fetchTopic{}
			for _, t := range req.Topics {
				topics = append(topics, fetchTopic{name: t.Topic, partitions: t.Partitions})
			}
		}
		if !az.group(req.Group) {
			return offsetFetchGroupDenied(req, topics)
		}
		g, code := fetchGroupOffsets(ctx, gd.Coordinator, im, req.Version, req.Group, topics, req.RequireStable, az.topic)
		if req.Version >= 2 {
			resp.ErrorCode = code
		}
		for _, t := range g.Topics {
			rt := kmsg.NewOffsetFetchResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetFetchResponseTopicPartition()
				rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata, rp.ErrorCode = p.Partition, p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	for _, rg := range req.Groups {
		var topics []fetchTopic
		if rg.Topics != nil {
			topics = []fetchTopic{}
			for _, t := range rg.Topics {
				ft := fetchTopic{name: t.Topic, id: t.TopicID, partitions: t.Partitions}
				if req.Version >= 10 {
					ft.name = ""
					if topic, ok := im.TopicByID(kafka.UUID(t.TopicID)); ok {
						ft.name = topic.Name
					}
				}
				topics = append(topics, ft)
			}
		}
		if !az.group(rg.Group) {
			g := kmsg.NewOffsetFetchResponseGroup()
			g.Group, g.ErrorCode = rg.Group, kerr.GroupAuthorizationFailed.Code
			resp.Groups = append(resp.Groups, g)
			continue
		}
		if req.Version >= 9 && (rg.MemberID != nil || rg.MemberEpoch >= 0) {
			// A consumer-group member fetches with its epoch (KIP-848).
			if code := gd.Coordinator.ValidateOffsetFetch(ctx, rg.Group, rg.MemberID, rg.MemberEpoch); code != 0 {
				g := kmsg.NewOffsetFetchResponseGroup()
				g.Group, g.ErrorCode = rg.Group, code
				resp.Groups = append(resp.Groups, g)
				continue
			}
		}
		g, code := fetchGroupOffsets(ctx, gd.Coordinator, im, req.Version, rg.Group, topics, req.RequireStable, az.topic)
		g.Group = rg.Group
		g.ErrorCode = code
		if code != 0 {
			g.Topics = nil
		}
		resp.Groups = append(resp.Groups, g)
	}
	return resp
}

// offsetFetchGroupDenied is the v1-7 answer for a group the principal may
// not describe: the response's error from v2, each partition's in v1.
func offsetFetchGroupDenied(req *kmsg.OffsetFetchRequest, topics []fetchTopic) *kmsg.OffsetFetchResponse {
	resp := kmsg.NewPtrOffsetFetchResponse()
	resp.SetVersion(req.Version)
	if req.Version >= 2 {
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return resp
	}
	for _, t := range topics {
		rt := kmsg.NewOffsetFetchResponseTopic()
		rt.Topic = t.name
		for _, p := range t.partitions {
			rp := kmsg.NewOffsetFetchResponseTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata = p, -1, -1, new(string)
			rp.ErrorCode = kerr.GroupAuthorizationFailed.Code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// fetchGroupOffsets answers one group in the v8+ shape (the older shape is
// copied from it); nil topics means all. describable is DESCRIBE on a
// topic: a requested one refused is TOPIC_AUTHORIZATION_FAILED, one of all
// the group's offsets left out.
func fetchGroupOffsets(ctx context.Context, gp GroupPlane, im *metadata.Image, version int16, groupID string, topics []fetchTopic, requireStable bool, describable func(string) bool) (kmsg.OffsetFetchResponseGroup, int16) {
	g := kmsg.NewOffsetFetchResponseGroup()
	var parts []kafka.TopicPartition
	refused := false
	for _, t := range topics {
		if t.name != "" && !describable(t.name) {
			refused = true
		}
		if t.name == "" || !describable(t.name) {
			continue
		}
		for _, p := range t.partitions {
			parts = append(parts, kafka.TopicPartition{Topic: t.name, Partition: p})
		}
	}
	var fetched []group.FetchedOffset
	var code int16
	// Kafka asks the coordinator even when every topic was refused.
	if topics == nil || len(parts) > 0 || refused {
		fetched, code = gp.FetchOffsets(ctx, groupID, parts, requireStable)
	}
	byTP := make(map[kafka.TopicPartition]group.FetchedOffset, len(fetched))
	for _, f := range fetched {
		byTP[f.TP] = f
	}
	partition := func(tp kafka.TopicPartition, f group.FetchedOffset, ok bool) kmsg.OffsetFetchResponseGroupTopicPartition {
		rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
		rp.Partition = tp.Partition
		rp.Offset, rp.LeaderEpoch, rp.Metadata = -1, -1, new(string)
		if ok {
			rp.Offset, rp.LeaderEpoch, rp.Metadata, rp.ErrorCode = f.Offset, f.LeaderEpoch, f.Metadata, f.ErrorCode
		}
		if code != 0 && version < 2 {
			rp.ErrorCode = code
		}
		return rp
	}
	if topics == nil {
		var last *kmsg.OffsetFetchResponseGroupTopic
		for _, f := range fetched {
			if !describable(f.TP.Topic) {
				continue
			}
			if last == nil || last.Topic != f.TP.Topic {
				t := kmsg.NewOffsetFetchResponseGroupTopic()
				t.Topic = f.TP.Topic
				if topic, ok := im.Topic(f.TP.Topic); ok {
					t.TopicID = topic.ID
				}
				g.Topics = append(g.Topics, t)
				last = &g.Topics[len(g.Topics)-1]
			}
			last.Partitions = append(last.Partitions, partition(f.TP, f, true))
		}
		return g, code
	}
	for _, t := range topics {
		rt := kmsg.NewOffsetFetchResponseGroupTopic()
		rt.Topic, rt.TopicID = t.name, t.id
		for _, p := range t.partitions {
			tp := kafka.TopicPartition{Topic: t.name, Partition: p}
			f, ok := byTP[tp]
			rp := partition(tp, f, ok)
			if t.name == "" {
				rp.ErrorCode = kerr.UnknownTopicID.Code
			} else if !describable(t.name) {
				rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		g.Topics = append(g.Topics, rt)
	}
	return g, code
}
