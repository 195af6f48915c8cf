package groupcoord

import (
	"context"
	"fmt"

	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/coordinator/runtime"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/replication"
)

// GroupCoordinator is the broker's group coordinator (Kafka's
// GroupCoordinatorService): it maps each group to its __consumer_offsets
// partition and runs the group operations on that partition's shard.
type GroupCoordinator struct {
	rt       *runtime.Runtime[*groupShard]
	verifier replication.TxnVerifier
	cfg      group.Config
	// retired holds the counters of shards that stopped (metrics.go).
	retired *retiredCounters
	// share is the share groups' link to the share coordinator (share.go).
	share shareLink
}

// New returns a coordinator with no shards; ApplyImage starts them.
func New(opts Options) (*GroupCoordinator, error) {
	opts.withDefaults()
	retired := &retiredCounters{}
	rt, err := runtime.New(opts.runtimeOptions(retired))
	if err != nil {
		return nil, fmt.Errorf("group coordinator: %w", err)
	}
	return &GroupCoordinator{rt: rt, verifier: opts.Verifier, cfg: opts.groupConfig(), retired: retired}, nil
}

// ApplyImage starts a shard for each offsets partition this node leads
// (or restarts it on a new leader epoch) and stops the others. The node
// calls it after each metadata change.
func (c *GroupCoordinator) ApplyImage(image *metadata.Image) { c.rt.ApplyImage(image) }

// Close stops every shard.
func (c *GroupCoordinator) Close() { c.rt.Close() }

// PartitionFor returns the offsets partition of a group: Kafka's
// Utils.abs(groupId.hashCode()) % partitionCount.
func (c *GroupCoordinator) PartitionFor(groupID string) int32 {
	return runtime.PartitionFor(groupID, c.rt.PartitionCount())
}

// FindCoordinator returns the broker that coordinates groupID, as reached
// on listener; the offsets topic is created on first use. While it is being
// created or has no leader the answer is COORDINATOR_NOT_AVAILABLE.
func (c *GroupCoordinator) FindCoordinator(ctx context.Context, groupID, listener string) (runtime.Node, int16) {
	return c.rt.Locate(ctx, groupID, listener)
}
