package controller

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/purgatory"
	"github.com/sluice-io/sluice/internal/quorum"
)

// Proposer commits encoded records computed on the image at imageOffset
// (the offset of the last record applied to it) and returns once they are
// committed and applied, with the entry's offset. It refuses, with an error
// wrapping quorum.ErrNotLeader, records computed on an image that misses
// entries of an earlier term or entries applied since: such records could
// contradict what is already committed (two TopicRecords for one name), and
// every voter would stop at replay. quorum.Driver implements it; the
// simulation steps a Voter behind it.
type Proposer interface {
	ProposeAfter(ctx context.Context, data []byte, imageOffset int64) (int64, error)
}

// ErrNotController says this node is not (or no longer) the active
// controller: Kafka's NOT_CONTROLLER, retriable for clients.
var ErrNotController = errors.New("this node is not the active controller")

// ErrStopped is the error of operations run after Stop.
var ErrStopped = errors.New("controller stopped")

// Runner runs controller operations one at a time, each on the image that
// holds every earlier operation's records: compute, propose, wait for the
// commit (apply-on-commit). It is the one runner of production and of the
// simulation. It starts no goroutine: callers take turns.
type Runner struct {
	images   func() *metadata.Image
	proposer Proposer
	// turn holds one token: the operation holding it runs.
	turn chan struct{}
	// stopped ends waits for a turn and cancels the proposal in flight.
	stopped context.Context
	stop    context.CancelFunc
}

// NewRunner returns a runner over the applied image and the quorum.
func NewRunner(images func() *metadata.Image, proposer Proposer) *Runner {
	r := &Runner{images: images, proposer: proposer, turn: make(chan struct{}, 1)}
	r.stopped, r.stop = context.WithCancel(context.Background())
	r.turn <- struct{}{}
	return r
}

// Stop makes every later operation fail with ErrStopped and cancels the
// proposal in flight, if any.
func (r *Runner) Stop() { r.stop() }

// Run computes op on the latest image and commits its records. It returns
// op's result and the offset of the image the result holds (the committed
// entry's, or the image op read when it proposed nothing). On an error
// (not the leader, stopped, ctx) the records may or may not have
// committed, as after a Kafka controller timeout; a refusal because this
// node does not lead wraps ErrNotController.
func Run[R any](ctx context.Context, r *Runner, op func(*metadata.Image) ([]metadata.Record, R)) (R, int64, error) {
	return run(ctx, r, func(im *metadata.Image) ([]metadata.Record, R, error) {
		recs, resp := op(im)
		return recs, resp, nil
	})
}

// Apply runs an operation that builds only records; an error from op
// proposes nothing and is returned as it is.
func Apply(ctx context.Context, r *Runner, op func(*metadata.Image) ([]metadata.Record, error)) (int64, error) {
	_, offset, err := run(ctx, r, func(im *metadata.Image) ([]metadata.Record, struct{}, error) {
		recs, err := op(im)
		return recs, struct{}{}, err
	})
	return offset, err
}

func run[R any](ctx context.Context, r *Runner, op func(*metadata.Image) ([]metadata.Record, R, error)) (R, int64, error) {
	var zero R
	select {
	case <-r.turn:
	case <-r.stopped.Done():
		return zero, -1, ErrStopped
	case <-ctx.Done():
		return zero, -1, ctx.Err()
	}
	defer func() { r.turn <- struct{}{} }()
	if r.stopped.Err() != nil {
		return zero, -1, ErrStopped
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(r.stopped, cancel)()
	im := r.images()
	recs, resp, err := op(im)
	if err != nil {
		return zero, -1, err
	}
	if len(recs) == 0 {
		return resp, im.Offset(), nil
	}
	// Waiting for the commit is the request's remote time, as Kafka's
	// controller completes the request's future once its records commit.
	purgatory.Park(ctx)
	offset, err := r.proposer.ProposeAfter(ctx, metadata.EncodeRecords(recs), im.Offset())
	purgatory.Unpark(ctx)
	if err != nil {
		var notLeader quorum.NotLeaderError
		switch {
		case errors.As(err, &notLeader):
			return zero, -1, fmt.Errorf("%w (leader %d): %w", ErrNotController, notLeader.Leader, err)
		case errors.Is(err, quorum.ErrNotLeader):
			return zero, -1, fmt.Errorf("%w: %w", ErrNotController, err)
		case r.stopped.Err() != nil:
			return zero, -1, fmt.Errorf("%w: %w", ErrStopped, err)
		}
		return zero, -1, fmt.Errorf("controller: commit %d records: %w", len(recs), err)
	}
	return resp, offset, nil
}
