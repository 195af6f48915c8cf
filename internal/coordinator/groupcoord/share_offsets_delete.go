package groupcoord

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/coordinator/group"
)

// DeleteShareGroupOffsets serves a DeleteShareGroupOffsets (Kafka's
// deleteShareGroupOffsets): the empty share group's topics move to
// deleting, the share coordinator deletes their state topic by topic, and
// the deleted ones leave the group's state metadata. The answer lists the
// deleted topics, then the refused ones.
func (c *GroupCoordinator) DeleteShareGroupOffsets(ctx context.Context, groupID string, topics []string) group.ShareOffsetsDeleteResult {
	if groupID == "" {
		return group.ShareOffsetsDeleteResult{ErrorCode: kerr.InvalidGroupID.Code, ErrorMessage: description(kerr.InvalidGroupID.Code)}
	}
	plan, code := call(ctx, c, groupID, func(now time.Time, m *group.Manager, reply func(group.ShareOffsetsDeletePlan)) {
		m.PrepareShareOffsetsDelete(now, groupID, topics, reply)
	})
	switch {
	case code != 0:
		return group.ShareOffsetsDeleteResult{ErrorCode: code, ErrorMessage: description(code)}
	case plan.ErrorCode != 0:
		return group.ShareOffsetsDeleteResult{ErrorCode: plan.ErrorCode, ErrorMessage: plan.ErrorMessage}
	}
	refused := append([]group.DeletedTopicOutcome{}, plan.Errors...)
	if len(plan.Delete) == 0 {
		return group.ShareOffsetsDeleteResult{Topics: refused}
	}
	p := c.sharePersister()
	if p == nil {
		return group.ShareOffsetsDeleteResult{ErrorCode: kerr.UnknownServerError.Code, ErrorMessage: ptrTo(errNoPersister.Error())}
	}
	var deleted []group.ShareStateTopic
	for _, t := range plan.Delete {
		err := p.DeleteState(ctx, group.ShareStateRequest{GroupID: groupID, Topics: []group.ShareStateTopic{t}})
		if err == nil {
			deleted = append(deleted, t)
			continue
		}
		// Kafka answers a topic with any partition's error and that
		// error's own message.
		code := group.ErrorCodeOf(err)
		refused = append(refused, group.DeletedTopicOutcome{TopicName: t.TopicName, TopicID: t.TopicID, ErrorCode: code, ErrorMessage: description(code)})
	}
	if len(deleted) == 0 {
		return group.ShareOffsetsDeleteResult{Topics: refused}
	}
	type done struct {
		out  []group.DeletedTopicOutcome
		code int16
	}
	res, code := call(ctx, c, groupID, func(now time.Time, m *group.Manager, reply func(done)) {
		m.CompleteShareOffsetsDelete(now, groupID, deleted, func(out []group.DeletedTopicOutcome, code int16) { reply(done{out, code}) })
	})
	if code == 0 {
		code = res.code
	}
	if code != 0 {
		return group.ShareOffsetsDeleteResult{ErrorCode: code, ErrorMessage: description(code)}
	}
	return group.ShareOffsetsDeleteResult{Topics: append(res.out, refused...)}
}
