// Package publisher hands published metadata images to a broker's
// subscribers (topic configs, the replica manager, the coordinators) on a
// goroutine of its own, as Kafka's MetadataLoader does with its event
// queue. The metadata Loader runs on the quorum's apply goroutine (a
// voter's Raft loop, or an observer's fetch loop); anything slow a
// subscriber does there (creating thousands of partition logs, loading a
// coordinator) would delay Raft ticks and heartbeats. The Loader only
// enqueues; the publisher's goroutine delivers each delta in log order.
package publisher

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/sluice-io/sluice/internal/metadata"
)

// Subscriber is told of every published image with the delta that built
// it. A nil delta, or one whose base is empty (offset -1: a snapshot
// replaced the image), means "rebuild from the whole image".
type Subscriber func(delta *metadata.Delta, image *metadata.Image)

// ErrStopped is returned by WaitFor once the publisher has stopped.
var ErrStopped = errors.New("metadata publisher stopped")

type event struct {
	delta *metadata.Delta
	image *metadata.Image
}

// Publisher queues images from the Loader and delivers them. Start and
// Stop own its goroutine.
type Publisher struct {
	log  *slog.Logger
	subs []Subscriber

	mu      sync.Mutex
	started bool
	queue   []event
	// changed is closed and replaced each time an image is delivered.
	changed chan struct{}
	wake    chan struct{} // buffered: one pending wake-up is enough

	// published is the image every subscriber has been given last.
	// Invariant: its offset only grows.
	published atomic.Pointer[metadata.Image]

	stopOnce sync.Once
	stopc    chan struct{}
	donec    chan struct{}
}

// New returns a publisher that delivers to subs, in order.
func New(logger *slog.Logger, subs ...Subscriber) *Publisher {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	p := &Publisher{log: logger, subs: subs, changed: make(chan struct{}), wake: make(chan struct{}, 1),
		stopc: make(chan struct{}), donec: make(chan struct{})}
	p.published.Store(metadata.EmptyImage())
	return p
}

// Enqueue is the Loader's subscriber: it queues the image and returns at
// once. Before Start it drops the image (Start delivers the whole current
// image first), and after Stop too.
func (p *Publisher) Enqueue(delta *metadata.Delta, image *metadata.Image) {
	select {
	case <-p.stopc:
		return
	default:
	}
	p.mu.Lock()
	if !p.started {
		p.mu.Unlock()
		return
	}
	p.queue = append(p.queue, event{delta: delta, image: image})
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Start starts delivering: first current() as a whole image, then every
// image enqueued after it. current is read under the queue's lock, so no
// image the Loader publishes in between is lost.
func (p *Publisher) Start(current func() *metadata.Image) {
	p.mu.Lock()
	if p.started {
		p.mu.Unlock()
		return
	}
	p.started = true
	p.queue = append(p.queue, event{image: current()})
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default: // an Enqueue since has already woken it
	}
	go func() {
		defer close(p.donec)
		p.run()
	}()
}

// Stop ends delivery after the subscriber call in progress, if any, and
// waits for it. Images still queued are not delivered.
func (p *Publisher) Stop() {
	p.mu.Lock()
	started := p.started
	p.started = true // a later Start must not run
	p.mu.Unlock()
	p.stopOnce.Do(func() { close(p.stopc) })
	if started {
		<-p.donec
	}
}

func (p *Publisher) run() {
	first := true
	for {
		select {
		case <-p.stopc:
			return
		case <-p.wake:
		}
		for {
			ev, ok := p.next()
			if !ok {
				break
			}
			if !first && ev.image.Offset() <= p.published.Load().Offset() {
				continue // already in the whole image delivered first
			}
			p.deliver(ev, first)
			first = false
			select {
			case <-p.stopc:
				return
			default:
			}
		}
	}
}

func (p *Publisher) next() (event, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.queue) == 0 {
		return event{}, false
	}
	ev := p.queue[0]
	p.queue[0] = event{}
	p.queue = p.queue[1:]
	return ev, true
}

func (p *Publisher) deliver(ev event, whole bool) {
	delta := ev.delta
	if whole {
		delta = nil
	}
	for _, s := range p.subs {
		s(delta, ev.image)
	}
	p.published.Store(ev.image)
	p.mu.Lock()
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
	p.log.Debug("metadata image delivered", "offset", ev.image.Offset())
}

// Image is the image every subscriber has been given last (the empty image
// before the first): what the broker's handlers answer from.
func (p *Publisher) Image() *metadata.Image { return p.published.Load() }

// WaitFor returns once an image at offset or beyond has been delivered to
// every subscriber, or with ctx's error, or ErrStopped.
func (p *Publisher) WaitFor(ctx context.Context, offset int64) error {
	for {
		p.mu.Lock()
		changed := p.changed
		p.mu.Unlock()
		if p.published.Load().Offset() >= offset {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		case <-p.stopc:
			return ErrStopped
		}
	}
}

// Pending is the number of images queued and not yet delivered.
func (p *Publisher) Pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.queue)
}
