package purgatory

import (
	"context"
	"sync/atomic"
	"time"
)

// ParkedTime adds up the time a request spent parked in purgatories: the
// server puts one in the context it serves a request with and reads it as
// the request's remote time (Kafka's RemoteTimeMs, the time between the
// handler's local work and the delayed operation completing).
type ParkedTime struct{ nanos atomic.Int64 }

// Take returns the time parked since the last Take and resets it.
func (p *ParkedTime) Take() time.Duration { return time.Duration(p.nanos.Swap(0)) }

func (p *ParkedTime) add(d time.Duration) {
	if d > 0 {
		p.nanos.Add(int64(d))
	}
}

type parkedKey struct{}

// WithParkedTime returns ctx carrying p, which every Wait on ctx that
// parks adds its time to.
func WithParkedTime(ctx context.Context, p *ParkedTime) context.Context {
	return context.WithValue(ctx, parkedKey{}, p)
}

// parkedTimeOf returns ctx's ParkedTime, or nil.
func parkedTimeOf(ctx context.Context) *ParkedTime {
	p, _ := ctx.Value(parkedKey{}).(*ParkedTime)
	return p
}
