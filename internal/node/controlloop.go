package node

import (
	"context"
	"errors"
	"fmt"

	"sluice/internal/api"
	"sluice/internal/metadata"
	"sluice/internal/quorum"
)

// controlLoop runs controller operations one at a time: each computes its
// records against the image that holds every earlier operation's records,
// proposes them through the quorum and completes once they are committed
// and applied (apply-on-commit). One goroutine, started by start and ended
// by stop, owns the sequence.
type controlLoop struct {
	driver *quorum.Driver
	image  func() *metadata.Image
	ops    chan controlOp
	stopc  chan struct{}
	donec  chan struct{}
}

// controlOp computes the records of one operation against an image. Any
// response it builds is captured by the closure; an error proposes nothing.
type controlOp struct {
	compute func(im *metadata.Image) ([]metadata.Record, error)
	result  chan error
}

func newControlLoop(driver *quorum.Driver, image func() *metadata.Image) *controlLoop {
	return &controlLoop{
		driver: driver,
		image:  image,
		ops:    make(chan controlOp),
		stopc:  make(chan struct{}),
		donec:  make(chan struct{}),
	}
}

func (c *controlLoop) start() {
	go func() {
		defer close(c.donec)
		// Proposals end with the loop: stop cancels what is in flight.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-c.stopc:
				cancel()
			case <-ctx.Done():
			}
		}()
		for {
			select {
			case <-c.stopc:
				return
			case op := <-c.ops:
				op.result <- c.run(ctx, op)
			}
		}
	}()
}

func (c *controlLoop) run(ctx context.Context, op controlOp) error {
	im := c.image()
	records, err := op.compute(im)
	if err != nil || len(records) == 0 {
		return err
	}
	// ProposeAfter refuses records computed on an image that misses entries
	// of an earlier term (a new leader that has not applied them yet) or
	// entries applied since: such records could contradict what is already
	// committed (two TopicRecords for one name), and every voter would stop
	// at replay. The refusal is a NotLeaderError, retriable for clients.
	if _, err := c.driver.ProposeAfter(ctx, metadata.EncodeRecords(records), im.Offset()); err != nil {
		var notLeader quorum.NotLeaderError
		if errors.As(err, &notLeader) {
			return fmt.Errorf("%w (leader %d): %w", api.ErrNotController, notLeader.Leader, err)
		}
		return fmt.Errorf("propose metadata records: %w", err)
	}
	return nil
}

// stop ends the loop and waits for it; operations submitted later fail.
func (c *controlLoop) stop() {
	select {
	case <-c.stopc:
	default:
		close(c.stopc)
	}
	<-c.donec
}

// errControllerStopped is the error of operations submitted after stop.
var errControllerStopped = errors.New("controller stopped")

// submit runs compute on the loop and waits for its records to be applied.
// When ctx ends first the operation may still complete later.
func (c *controlLoop) submit(ctx context.Context, compute func(im *metadata.Image) ([]metadata.Record, error)) error {
	op := controlOp{compute: compute, result: make(chan error, 1)}
	select {
	case c.ops <- op:
	case <-c.stopc:
		return errControllerStopped
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-op.result:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
