package groupcoord

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// ConsumerGroupHeartbeat serves a ConsumerGroupHeartbeat (KIP-848); it
// answers once what the heartbeat changed is durable. version is the
// request's.
func (c *GroupCoordinator) ConsumerGroupHeartbeat(ctx context.Context, req group.ConsumerHeartbeatRequest, version int16) group.ConsumerHeartbeatResult {
	if code, msg := c.cfg.ValidateConsumerHeartbeat(req, version); code != 0 {
		return group.ConsumerHeartbeatResult{ErrorCode: code, ErrorMessage: &msg}
	}
	res, code := call(ctx, c, req.GroupID, func(now time.Time, m *group.Manager, reply func(group.ConsumerHeartbeatResult)) {
		m.ConsumerHeartbeat(now, req, reply)
	})
	if code != 0 {
		return group.ConsumerHeartbeatResult{ErrorCode: code, MemberID: req.MemberID, MemberEpoch: req.MemberEpoch}
	}
	return res
}

// ConsumerGroupDescribe serves one group of a ConsumerGroupDescribe.
func (c *GroupCoordinator) ConsumerGroupDescribe(ctx context.Context, groupID string) group.ConsumerGroupDescription {
	if groupID == "" {
		return group.ConsumerGroupDescription{ErrorCode: kerr.InvalidGroupID.Code}
	}
	res, code := call(ctx, c, groupID, func(_ time.Time, m *group.Manager, reply func(group.ConsumerGroupDescription)) {
		reply(m.DescribeConsumerGroup(groupID))
	})
	if code != 0 {
		return group.ConsumerGroupDescription{GroupID: groupID, ErrorCode: code}
	}
	return res
}

// imageTopics shows a metadata image's topics to consumer groups.
type imageTopics struct{ im *metadata.Image }

func (t imageTopics) ByName(name string) (group.TopicInfo, bool) {
	tp, ok := t.im.Topic(name)
	if !ok {
		return group.TopicInfo{}, false
	}
	return group.TopicInfo{ID: tp.ID, Name: tp.Name, Partitions: int32(len(tp.Partitions))}, true
}

func (t imageTopics) ByID(id kafka.UUID) (group.TopicInfo, bool) {
	tp, ok := t.im.TopicByID(id)
	if !ok {
		return group.TopicInfo{}, false
	}
	return group.TopicInfo{ID: tp.ID, Name: tp.Name, Partitions: int32(len(tp.Partitions))}, true
}

func (t imageTopics) Names() []string { return t.im.TopicNames() }
func (t imageTopics) Version() int64  { return t.im.Offset() }

// ValidateOffsetFetch checks an OffsetFetch v9+ that names a member of a
// consumer group: it must give the member's current epoch.
func (c *GroupCoordinator) ValidateOffsetFetch(ctx context.Context, groupID string, memberID *string, memberEpoch int32) int16 {
	res, code := call(ctx, c, groupID, func(_ time.Time, m *group.Manager, reply func(int16)) {
		reply(m.ValidateOffsetFetch(groupID, memberID, memberEpoch))
	})
	if code != 0 {
		return code
	}
	return res
}
