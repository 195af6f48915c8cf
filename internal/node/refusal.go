package node

// A voter refused by the quorum's peers (its cluster id or
// controller.quorum.voters disagrees with theirs) cannot take part in it
// whatever it retries, so it stops with the transport's RefusedError, which
// names both voter lists, and the process exits non-zero.

import (
	"context"
	"sync"

	"github.com/sluice-io/sluice/internal/quorum"
)

// quorumRefusal carries the transport's refusal report to Run.
type quorumRefusal struct {
	mu     sync.Mutex
	err    error
	cancel context.CancelCauseFunc
}

// report records the refusal and ends Run's context (OnRefused).
func (r *quorumRefusal) report(e *quorum.RefusedError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return
	}
	r.err = e
	if r.cancel != nil {
		r.cancel(e)
	}
}

// bind derives Run's context, ended by a refusal (already reported or
// later); release frees it.
func (r *quorumRefusal) bind(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cancel = cancel
	if r.err != nil {
		cancel(r.err)
	}
	return ctx, func() { cancel(nil) }
}

// Err is the refusal, or nil.
func (r *quorumRefusal) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}
