package publisher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// recorder is a subscriber that keeps what it was given.
type recorder struct {
	mu    sync.Mutex
	calls []string // "whole@N" or "delta@N"
}

func (r *recorder) sub(d *metadata.Delta, im *metadata.Image) {
	r.mu.Lock()
	defer r.mu.Unlock()
	kind := "delta"
	if d == nil || d.Base().Offset() < 0 {
		kind = "whole"
	}
	r.calls = append(r.calls, fmt.Sprintf("%s@%d", kind, im.Offset()))
}

func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

func topicEntry(i int) []byte {
	id := kafka.UUID{0: byte(i + 1)}
	return metadata.EncodeRecords([]metadata.Record{&metadata.TopicRecord{Name: fmt.Sprintf("t%d", i), TopicID: id}})
}

// The first delivery is the whole image current at Start; then each later
// image arrives once, in order, as a delta; images the Loader published
// before Start are not delivered apart.
func TestPublisherDeliversWholeImageThenDeltasInOrder(t *testing.T) {
	rec := &recorder{}
	p := New(nil, rec.sub)
	loader := metadata.NewLoader(slog.New(slog.DiscardHandler), p.Enqueue)
	for i := range 3 {
		if err := loader.Apply(int64(i), 1, topicEntry(i)); err != nil {
			t.Fatal(err)
		}
	}
	p.Start(loader.Image)
	defer p.Stop()
	for i := 3; i < 6; i++ {
		if err := loader.Apply(int64(i), 1, topicEntry(i)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.WaitFor(ctx, 5); err != nil {
		t.Fatal(err)
	}
	want := []string{"whole@2", "delta@3", "delta@4", "delta@5"}
	if got := rec.seen(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("deliveries %v, want %v", got, want)
	}
	if p.Image().Offset() != 5 {
		t.Fatalf("published offset %d, want 5", p.Image().Offset())
	}
}

// Images applied concurrently with Start are delivered exactly once each
// and never skipped.
func TestPublisherStartRacesApply(t *testing.T) {
	for round := range 50 {
		rec := &recorder{}
		p := New(nil, rec.sub)
		loader := metadata.NewLoader(slog.New(slog.DiscardHandler), p.Enqueue)
		done := make(chan error, 1)
		go func() {
			for i := range 20 {
				if err := loader.Apply(int64(i), 1, topicEntry(i)); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
		p.Start(loader.Image)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := p.WaitFor(ctx, 19); err != nil {
			t.Fatalf("round %d: %v (seen %v)", round, err, rec.seen())
		}
		cancel()
		p.Stop()
		last := int64(-2)
		for _, c := range rec.seen() {
			var kind string
			var off int64
			fmt.Sscanf(c, "%5s@%d", &kind, &off)
			if off <= last {
				t.Fatalf("round %d: deliveries out of order or repeated: %v", round, rec.seen())
			}
			last = off
		}
	}
}

// A slow subscriber holds only the publisher's goroutine: Apply keeps
// returning at once.
func TestPublisherSlowSubscriberDoesNotBlockApply(t *testing.T) {
	release := make(chan struct{})
	p := New(nil, func(*metadata.Delta, *metadata.Image) { <-release })
	loader := metadata.NewLoader(slog.New(slog.DiscardHandler), p.Enqueue)
	p.Start(loader.Image)
	defer p.Stop()
	applied := make(chan struct{})
	go func() {
		defer close(applied)
		for i := range 100 {
			if err := loader.Apply(int64(i), 1, topicEntry(i)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	select {
	case <-applied:
	case <-time.After(10 * time.Second):
		t.Fatal("Apply blocked behind a slow subscriber")
	}
	if p.Image().Offset() >= 99 {
		t.Fatal("published although the subscriber was held")
	}
	close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.WaitFor(ctx, 99); err != nil {
		t.Fatal(err)
	}
}

func TestPublisherWaitForEndsAtStop(t *testing.T) {
	p := New(nil)
	p.Start(metadata.EmptyImage)
	errc := make(chan error, 1)
	go func() { errc <- p.WaitFor(context.Background(), 10) }()
	p.Stop()
	if err := <-errc; !errors.Is(err, ErrStopped) {
		t.Fatalf("WaitFor after Stop: %v, want ErrStopped", err)
	}
}
