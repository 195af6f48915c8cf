// Package runtimetest holds test helpers for coordinators built on the
// coordinator runtime.
package runtimetest

import (
	"context"
	"fmt"
	"sync"

	"github.com/sluice-io/sluice/internal/records"
)

// MemLog is an in-memory runtime.PartitionWriter: each partition is a list
// of batches whose offsets it assigns; everything appended is committed.
type MemLog struct {
	mu      sync.Mutex
	parts   map[int32][][]byte
	next    map[int32]int64
	fail    error
	appends int
	// gate, when set, holds every Append until it is closed; held counts
	// the appends that reached it.
	gate chan struct{}
	held int
}

// NewMemLog returns an empty log.
func NewMemLog() *MemLog {
	return &MemLog{parts: make(map[int32][][]byte), next: make(map[int32]int64)}
}

// Append appends batch, numbering its records after the partition's last.
func (l *MemLog) Append(ctx context.Context, partition int32, batch []byte) (int64, error) {
	l.mu.Lock()
	gate := l.gate
	if gate != nil {
		l.held++
	}
	l.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		return 0, l.fail
	}
	h, err := records.ParseHeader(batch)
	if err != nil {
		return 0, fmt.Errorf("bad batch: %w", err)
	}
	b := append([]byte(nil), batch...)
	records.SetBaseOffset(b, l.next[partition])
	l.parts[partition] = append(l.parts[partition], b)
	l.next[partition] += int64(h.LastOffsetDelta) + 1
	l.appends++
	return l.next[partition] - 1, nil
}

// Read returns the batches holding offset and after, up to about maxBytes.
func (l *MemLog) Read(_ context.Context, partition int32, offset int64, maxBytes int32) ([]byte, int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []byte
	for _, b := range l.parts[partition] {
		h, err := records.ParseHeader(b)
		if err != nil {
			return nil, 0, err
		}
		if h.LastOffset() < offset {
			continue
		}
		if len(out) > 0 && len(out)+len(b) > int(maxBytes) {
			break
		}
		out = append(out, b...)
	}
	return out, l.next[partition], nil
}

// SetFail makes every Append fail with err (nil: succeed again).
func (l *MemLog) SetFail(err error) {
	l.mu.Lock()
	l.fail = err
	l.mu.Unlock()
}

// Appends is how many appends succeeded.
func (l *MemLog) Appends() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.appends
}

// Hold makes every Append wait until gate is closed.
func (l *MemLog) Hold(gate chan struct{}) {
	l.mu.Lock()
	l.gate = gate
	l.mu.Unlock()
}

// Held is how many appends have reached the gate.
func (l *MemLog) Held() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held
}
