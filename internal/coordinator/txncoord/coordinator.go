package txncoord

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/coordinator/runtime"
	"github.com/sluice-io/sluice/internal/coordinator/txn"
	"github.com/sluice-io/sluice/internal/metadata"
)

// TransactionCoordinator is the broker's transaction coordinator (Kafka's
// TransactionCoordinator): it maps each transactional id to its
// __transaction_state partition, runs the transaction operations on that
// partition's shard and writes the markers of decided transactions.
type TransactionCoordinator struct {
	opts    Options
	rt      *runtime.Runtime[*txnShard]
	markers *MarkerChannel
}

// New returns a coordinator with no shards (ApplyImage starts them) and
// its marker channel stopped (Start starts it).
func New(opts Options) (*TransactionCoordinator, error) {
	if err := opts.withDefaults(); err != nil {
		return nil, fmt.Errorf("transaction coordinator: %w", err)
	}
	c := &TransactionCoordinator{opts: opts}
	c.markers = newMarkerChannel(opts.NodeID, opts.Markers, opts.Image, opts.Clock,
		opts.Logger.With("component", "txn-marker-channel"), c.owns, c.markersWritten)
	cfg := opts.Txn
	rt, err := runtime.New(opts.runtimeOptions(func(partition, epoch int32, now time.Time) *txnShard {
		return &txnShard{mgr: txn.NewManager(cfg, epoch, now), partition: partition, epoch: epoch, markers: c.markers}
	}))
	if err != nil {
		return nil, fmt.Errorf("transaction coordinator: %w", err)
	}
	c.rt = rt
	return c, nil
}

// Start starts the marker channel; shards loaded before it hold their jobs
// in its queue.
func (c *TransactionCoordinator) Start() { c.markers.Start() }

// ApplyImage starts a shard for each __transaction_state partition this
// node leads (or restarts it on a new leader epoch) and stops the others.
// The node calls it after each metadata change.
func (c *TransactionCoordinator) ApplyImage(image *metadata.Image) { c.rt.ApplyImage(image) }

// Close stops every shard, then the marker channel (markers not written
// yet are written by the partitions' next coordinators).
func (c *TransactionCoordinator) Close() {
	c.rt.Close()
	c.markers.Stop()
}

// PartitionFor returns the __transaction_state partition of a
// transactional id: Kafka's Utils.abs(transactionalId.hashCode()) %
// partitionCount.
func (c *TransactionCoordinator) PartitionFor(transactionalID string) int32 {
	return runtime.PartitionFor(transactionalID, c.rt.PartitionCount())
}

// FindCoordinator returns the broker that coordinates transactionalID, as
// reached on listener; the topic is created on first use, and until it
// has a leader the answer is COORDINATOR_NOT_AVAILABLE.
func (c *TransactionCoordinator) FindCoordinator(ctx context.Context, transactionalID, listener string) (runtime.Node, int16) {
	return c.rt.Locate(ctx, transactionalID, listener)
}

// call runs fn on the loop of the id's shard and waits for its answer; the
// code is non-zero when the shard could not serve (NOT_COORDINATOR,
// COORDINATOR_LOAD_IN_PROGRESS, REQUEST_TIMED_OUT).
func call[T any](ctx context.Context, c *TransactionCoordinator, transactionalID string, fn func(now time.Time, m *txn.Manager, reply func(T))) (T, int16) {
	return runtime.Call(ctx, c.rt, c.PartitionFor(transactionalID), func(now time.Time, s *txnShard, reply func(T)) {
		fn(now, s.mgr, reply)
	})
}

// owns reports whether this node still runs the partition's shard at the
// coordinator epoch a marker job was emitted at.
func (c *TransactionCoordinator) owns(partition, coordinatorEpoch int32) bool {
	epoch, ok := c.rt.LeaderEpoch(partition)
	return ok && epoch == coordinatorEpoch
}

// markersWritten reports to the shard that every partition of job has its
// marker, so that it writes the completion. A shard of another epoch
// ignores it (its load emitted its own job).
func (c *TransactionCoordinator) markersWritten(ctx context.Context, partition int32, job txn.MarkerJob) {
	runtime.Call(ctx, c.rt, partition, func(now time.Time, s *txnShard, reply func(struct{})) {
		if s.epoch == job.CoordinatorEpoch {
			s.mgr.MarkersWritten(now, job)
		}
		reply(struct{}{})
	})
}

// producerIDErrorCode is the code answered when no producer id could be
// allocated: Kafka's code when the failure carries one, else
// COORDINATOR_NOT_AVAILABLE, which clients retry after looking the
// coordinator up again.
func producerIDErrorCode(err error) int16 {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return kerr.CoordinatorNotAvailable.Code
}
