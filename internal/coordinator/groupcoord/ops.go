package groupcoord

import (
	"context"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/coordinator/runtime"
	"github.com/sluice-io/sluice/internal/kafka"
)

// call runs fn on the loop of the group's shard and waits for the value it
// delivers through its reply function. The code is non-zero when the shard
// could not serve (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS) or ctx
// ended (REQUEST_TIMED_OUT); the value is then the zero value.
func call[T any](ctx context.Context, c *GroupCoordinator, groupID string, fn func(now time.Time, mgr *group.Manager, reply func(T))) (T, int16) {
	return runtime.Call(ctx, c.rt, c.PartitionFor(groupID), func(now time.Time, s *groupShard, reply func(T)) {
		fn(now, s.mgr, reply)
	})
}

// JoinGroup serves a JoinGroup; it blocks until the rebalance completes.
func (c *GroupCoordinator) JoinGroup(ctx context.Context, req group.JoinRequest) group.JoinResult {
	res, code := call(ctx, c, req.GroupID, func(now time.Time, m *group.Manager, reply func(group.JoinResult)) {
		m.Join(now, req, reply)
	})
	if code != 0 {
		return group.JoinResult{ErrorCode: code, MemberID: req.MemberID, GenerationID: -1}
	}
	return res
}

// SyncGroup serves a SyncGroup; it blocks until the leader's assignment is
// durable.
func (c *GroupCoordinator) SyncGroup(ctx context.Context, req group.SyncRequest) group.SyncResult {
	res, code := call(ctx, c, req.GroupID, func(now time.Time, m *group.Manager, reply func(group.SyncResult)) {
		m.Sync(now, req, reply)
	})
	if code != 0 {
		return group.SyncResult{ErrorCode: code}
	}
	return res
}

// Heartbeat serves a Heartbeat.
func (c *GroupCoordinator) Heartbeat(ctx context.Context, req group.HeartbeatRequest) int16 {
	res, code := call(ctx, c, req.GroupID, func(now time.Time, m *group.Manager, reply func(int16)) {
		reply(m.Heartbeat(now, req))
	})
	switch code {
	case 0:
		return res
	case kerr.CoordinatorLoadInProgress.Code:
		// Kafka answers heartbeats blindly while the group loads, so that
		// members are not sent to rejoin by a coordinator move.
		return 0
	default:
		return code
	}
}

// LeaveGroup serves a LeaveGroup.
func (c *GroupCoordinator) LeaveGroup(ctx context.Context, groupID string, members []group.LeaveMember) group.LeaveResult {
	res, code := call(ctx, c, groupID, func(now time.Time, m *group.Manager, reply func(group.LeaveResult)) {
		reply(m.Leave(now, groupID, members))
	})
	if code != 0 {
		return group.LeaveResult{ErrorCode: code}
	}
	return res
}

// CommitOffsets serves an OffsetCommit; it answers once the offsets are
// durable.
func (c *GroupCoordinator) CommitOffsets(ctx context.Context, req group.CommitRequest) group.CommitResult {
	res, code := call(ctx, c, req.GroupID, func(now time.Time, m *group.Manager, reply func(group.CommitResult)) {
		m.CommitOffsets(now, req, reply)
	})
	if code != 0 {
		res = group.CommitResult{Errors: make([]int16, len(req.Partitions))}
		for i := range res.Errors {
			res.Errors[i] = code
		}
	}
	return res
}

// FetchOffsets serves one group of an OffsetFetch; nil parts asks for all
// of the group's offsets. Offsets of transactions not completed are not
// seen. With requireStable the answer waits for the shard's writes in
// flight, so that it includes commits not yet durable when it arrived, and
// a partition with offsets of a transaction not completed answers
// UNSTABLE_OFFSET_COMMIT. The code is the group-level error.
func (c *GroupCoordinator) FetchOffsets(ctx context.Context, groupID string, parts []kafka.TopicPartition, requireStable bool) ([]group.FetchedOffset, int16) {
	return call(ctx, c, groupID, func(_ time.Time, m *group.Manager, reply func([]group.FetchedOffset)) {
		if !requireStable {
			reply(m.FetchOffsets(groupID, parts, false))
			return
		}
		m.AfterWrites(func() { reply(m.FetchOffsets(groupID, parts, true)) })
	})
}

// DeleteOffsets serves an OffsetDelete: a group code and one code per
// partition.
func (c *GroupCoordinator) DeleteOffsets(ctx context.Context, groupID string, parts []kafka.TopicPartition) (int16, []int16) {
	type answer struct {
		code  int16
		codes []int16
	}
	res, code := call(ctx, c, groupID, func(now time.Time, m *group.Manager, reply func(answer)) {
		m.DeleteOffsets(now, groupID, parts, func(code int16, codes []int16) { reply(answer{code, codes}) })
	})
	if code != 0 {
		return code, nil
	}
	return res.code, res.codes
}

// DescribeGroup serves one group of a DescribeGroups.
func (c *GroupCoordinator) DescribeGroup(ctx context.Context, groupID string) group.Description {
	res, code := call(ctx, c, groupID, func(_ time.Time, m *group.Manager, reply func(group.Description)) {
		reply(m.Describe(groupID))
	})
	if code != 0 {
		return group.Description{ErrorCode: code, State: group.Dead}
	}
	return res
}

// DeleteGroup serves one group of a DeleteGroups.
func (c *GroupCoordinator) DeleteGroup(ctx context.Context, groupID string) int16 {
	if code, done := c.deleteShareGroup(ctx, groupID); done {
		return code
	}
	res, code := call(ctx, c, groupID, func(now time.Time, m *group.Manager, reply func(int16)) {
		m.Delete(now, groupID, reply)
	})
	if code != 0 {
		return code
	}
	return res
}

// ListGroups lists the groups of every shard. A shard that cannot answer
// (still loading) makes the whole answer that error with no groups, as in
// Kafka; shards that just lost their partition are left out.
func (c *GroupCoordinator) ListGroups(ctx context.Context) ([]group.Listing, int16) {
	answers := runtime.CallAll(ctx, c.rt, func(_ time.Time, s *groupShard, reply func([]group.Listing)) {
		reply(s.mgr.List())
	})
	var all []group.Listing
	for _, a := range answers {
		if a.Code != 0 && a.Code != kerr.NotCoordinator.Code {
			return nil, a.Code
		}
		all = append(all, a.Value...)
	}
	slices.SortFunc(all, func(a, b group.Listing) int {
		switch {
		case a.GroupID < b.GroupID:
			return -1
		case a.GroupID > b.GroupID:
			return 1
		}
		return 0
	})
	return all, 0
}
