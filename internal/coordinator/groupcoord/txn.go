package groupcoord

import (
	"context"
	"time"

	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/coordinator/runtime"
)

// CommitTransactionalOffsets serves a TxnOffsetCommit: the offsets are
// written to the group's partition as a transactional batch of the
// producer, and it answers once they are durable. They stay pending, unseen
// by OffsetFetch, until CompleteTransaction brings the transaction's result.
// With a Verifier the transaction is verified first (verifyOffsetsPartition).
func (c *GroupCoordinator) CommitTransactionalOffsets(ctx context.Context, req group.TxnCommitRequest) group.CommitResult {
	code := c.verifyOffsetsPartition(ctx, req)
	var res group.CommitResult
	if code == 0 {
		res, code = call(ctx, c, req.GroupID, func(now time.Time, m *group.Manager, reply func(group.CommitResult)) {
			m.CommitTransactionalOffsets(now, req, reply)
		})
	}
	if code != 0 {
		res = group.CommitResult{Errors: make([]int16, len(req.Partitions))}
		for i := range res.Errors {
			res.Errors[i] = code
		}
	}
	return res
}

// CompleteTransaction applies a transaction's result to the offsets it
// committed in the given __consumer_offsets partitions: commit makes the
// producer's pending offsets there committed, abort drops them. The broker's
// marker writer calls it once the marker is durable in those partitions, as
// their leader (Kafka's old coordinator's onTransactionCompleted).
//
// It returns once each partition's shard has applied the result, or ctx
// ends. A shard still loading applies it after its load (which may have
// read the marker already: applying it twice changes nothing); a partition
// no shard runs is skipped, as the shard that starts later replays the
// marker.
func (c *GroupCoordinator) CompleteTransaction(ctx context.Context, producerID int64, partitions []int32, commit bool) {
	for _, p := range partitions {
		runtime.CallAfterLoad(ctx, c.rt, p, func(now time.Time, s *groupShard, reply func(struct{})) {
			s.mgr.CompleteTransaction(now, producerID, commit)
			reply(struct{}{})
		})
	}
}
