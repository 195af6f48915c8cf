package controller

import (
	"context"
	"fmt"
	"sync"

	"sluice/internal/metadata"
)

// Proposer commits encoded records: quorum.Driver's Propose, which returns
// once the entry is committed and applied to the image (the Loader runs in
// the quorum's apply callback before Propose returns).
type Proposer interface {
	Propose(ctx context.Context, data []byte) (int64, error)
}

// ImageSource gives the latest published image (metadata.Loader).
type ImageSource interface {
	Image() *metadata.Image
}

// Executor runs controller operations one at a time, each on the image that
// holds the previous one's records: compute, propose, wait for the commit.
// That keeps the records of two operations from contradicting each other.
type Executor struct {
	mu       sync.Mutex
	images   ImageSource
	proposer Proposer
}

// NewExecutor returns an executor over a loader and the quorum.
func NewExecutor(images ImageSource, proposer Proposer) *Executor {
	return &Executor{images: images, proposer: proposer}
}

// Execute runs op and commits its records. The response is valid only when
// the error is nil; an error (not the leader, stopped, timeout) means the
// records may or may not have committed, as a Kafka controller timeout does.
func Execute[R any](ctx context.Context, e *Executor, op func(*metadata.Image) ([]metadata.Record, R)) (R, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	recs, resp := op(e.images.Image())
	if len(recs) == 0 {
		return resp, nil
	}
	if _, err := e.proposer.Propose(ctx, metadata.EncodeRecords(recs)); err != nil {
		var zero R
		return zero, fmt.Errorf("controller: commit %d records: %w", len(recs), err)
	}
	return resp, nil
}
