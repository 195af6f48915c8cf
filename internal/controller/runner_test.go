package controller

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/metadata"
)

// blockingProposer holds each proposal until released or cancelled and
// counts how many run at once.
type blockingProposer struct {
	release  chan struct{}
	inFlight atomic.Int32
	maxSeen  atomic.Int32
	started  chan struct{}
}

func (p *blockingProposer) ProposeAfter(ctx context.Context, _ []byte, _ int64) (int64, error) {
	n := p.inFlight.Add(1)
	defer p.inFlight.Add(-1)
	for {
		m := p.maxSeen.Load()
		if n <= m || p.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	p.started <- struct{}{}
	select {
	case <-p.release:
		return 1, nil
	case <-ctx.Done():
		return -1, ctx.Err()
	}
}

func oneRecord(*metadata.Image) ([]metadata.Record, error) {
	return metadata.BootstrapRecords("c", 1), nil
}

// Operations run one at a time, however many callers submit at once.
func TestRunnerRunsOneOperationAtATime(t *testing.T) {
	p := &blockingProposer{release: make(chan struct{}), started: make(chan struct{}, 8)}
	loader := metadata.NewLoader(slog.New(slog.DiscardHandler))
	r := NewRunner(loader.Image, p)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := Apply(context.Background(), r, oneRecord); err != nil {
				t.Error(err)
			}
		}()
	}
	for range 4 {
		<-p.started
		if n := p.inFlight.Load(); n != 1 {
			t.Fatalf("%d proposals in flight, want 1", n)
		}
		p.release <- struct{}{}
	}
	wg.Wait()
	if m := p.maxSeen.Load(); m != 1 {
		t.Fatalf("at most %d proposals ran at once, want 1", m)
	}
}

// Stop cancels the proposal in flight and refuses later operations, and a
// caller waiting for its turn gets ErrStopped.
func TestRunnerStopCancelsAndRefuses(t *testing.T) {
	p := &blockingProposer{release: make(chan struct{}), started: make(chan struct{}, 8)}
	loader := metadata.NewLoader(slog.New(slog.DiscardHandler))
	r := NewRunner(loader.Image, p)
	first := make(chan error, 1)
	go func() { _, err := Apply(context.Background(), r, oneRecord); first <- err }()
	<-p.started
	waiting := make(chan error, 1)
	go func() { _, err := Apply(context.Background(), r, oneRecord); waiting <- err }()
	r.Stop()
	for name, c := range map[string]chan error{"in flight": first, "waiting": waiting} {
		select {
		case err := <-c:
			if !errors.Is(err, ErrStopped) {
				t.Fatalf("%s operation: %v, want ErrStopped", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s operation not ended by Stop", name)
		}
	}
	if _, err := Apply(context.Background(), r, oneRecord); !errors.Is(err, ErrStopped) {
		t.Fatalf("operation after Stop: %v, want ErrStopped", err)
	}
}

// A compute error proposes nothing and comes back as it is.
func TestRunnerComputeErrorProposesNothing(t *testing.T) {
	p := &blockingProposer{release: make(chan struct{}), started: make(chan struct{}, 8)}
	loader := metadata.NewLoader(slog.New(slog.DiscardHandler))
	r := NewRunner(loader.Image, p)
	boom := errors.New("boom")
	_, err := Apply(context.Background(), r, func(*metadata.Image) ([]metadata.Record, error) { return nil, boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if p.maxSeen.Load() != 0 {
		t.Fatal("a failed compute proposed records")
	}
}
