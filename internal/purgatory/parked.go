package purgatory

import (
	"context"
	"sync"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
)

// ParkedTime adds up the time a request spent parked: in purgatories, or in
// other waits Kafka counts as remote time (Park, Unpark). The server puts
// one in the context it serves a request with and reads it as the
// request's remote time (Kafka's RemoteTimeMs, between the handler's local
// work and the delayed operation completing). Overlapping waits (a request
// fanned out to several shards) count once, for as long as any lasts.
// Waits are timed on the ParkedTime's clock, the one that times the rest of
// the request.
type ParkedTime struct {
	clk   clock.Clock
	mu    sync.Mutex
	depth int
	since time.Time
	total time.Duration
}

// NewParkedTime returns a ParkedTime timing waits on clk.
func NewParkedTime(clk clock.Clock) *ParkedTime { return &ParkedTime{clk: clk} }

// Take returns the time parked since the last Take and resets it.
func (p *ParkedTime) Take() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.total
	p.total = 0
	return d
}

func (p *ParkedTime) park() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.depth == 0 {
		p.since = p.clk.Now()
	}
	p.depth++
}

func (p *ParkedTime) unpark() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.depth--
	if p.depth == 0 {
		p.total += max(clock.Since(p.clk, p.since), 0)
	}
}

type parkedKey struct{}

// WithParkedTime returns ctx carrying p, which every wait on ctx that parks
// adds its time to.
func WithParkedTime(ctx context.Context, p *ParkedTime) context.Context {
	return context.WithValue(ctx, parkedKey{}, p)
}

// parkedTimeOf returns ctx's ParkedTime, or nil.
func parkedTimeOf(ctx context.Context) *ParkedTime {
	p, _ := ctx.Value(parkedKey{}).(*ParkedTime)
	return p
}

// Park marks the start of a wait outside a purgatory that Kafka counts as
// remote time (a request waiting on the group coordinator's answer, or
// forwarded to the active controller); each Park needs its Unpark on the
// same context. Both do nothing when ctx carries no ParkedTime.
func Park(ctx context.Context) {
	if p := parkedTimeOf(ctx); p != nil {
		p.park()
	}
}

// Unpark ends a wait Park began.
func Unpark(ctx context.Context) {
	if p := parkedTimeOf(ctx); p != nil {
		p.unpark()
	}
}
