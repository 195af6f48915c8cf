package quorum

import (
	"context"
	"sync"
)

// OffsetImage is a state machine image that knows the offset of the last
// record applied to it (metadata.Image).
type OffsetImage interface{ Offset() int64 }

// OffsetProposer proposes records computed on the image at an offset
// (Driver.ProposeAfter).
type OffsetProposer interface {
	ProposeAfter(ctx context.Context, data []byte, imageOffset int64) (int64, error)
}

// ConsistentProposer is both the image source and the proposer of one
// serial operation runner (controller.Executor): it remembers the offset of
// the image the running operation read and proposes its records only if
// nothing was applied since and the leader has applied every earlier term
// (ProposeAfter). Without it, an operation computed by a new leader before
// the previous leader's last entries were applied could commit records
// that contradict them (a second TopicRecord for one name), and every
// voter would stop at its replay; the simulation found exactly that.
//
//	cp := quorum.NewConsistentProposer(driver, loader.Image)
//	ex := controller.NewExecutor(cp, cp)
type ConsistentProposer[I OffsetImage] struct {
	proposer OffsetProposer
	images   func() I

	mu   sync.Mutex
	read int64
}

// NewConsistentProposer pairs a proposer with the image source.
func NewConsistentProposer[I OffsetImage](p OffsetProposer, images func() I) *ConsistentProposer[I] {
	return &ConsistentProposer[I]{proposer: p, images: images, read: -1}
}

// Image returns the latest image and remembers its offset for Propose.
func (c *ConsistentProposer[I]) Image() I {
	im := c.images()
	c.mu.Lock()
	c.read = im.Offset()
	c.mu.Unlock()
	return im
}

// Propose proposes data computed on the image Image last returned.
func (c *ConsistentProposer[I]) Propose(ctx context.Context, data []byte) (int64, error) {
	c.mu.Lock()
	read := c.read
	c.mu.Unlock()
	return c.proposer.ProposeAfter(ctx, data, read)
}
