package records

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/testutil"
)

func TestBudgetGrantsInOrderAndClamps(t *testing.T) {
	b := NewBudget(100)
	ctx := context.Background()
	if n, err := b.acquire(ctx, 60); err != nil || n != 60 {
		t.Fatalf("acquire 60: %d %v", n, err)
	}
	// A reservation larger than the whole budget is clamped: it runs alone.
	got := make(chan int64, 2)
	go func() {
		n, _ := b.acquire(ctx, 500)
		got <- n
		b.release(n)
	}()
	testutil.Eventually(t, time.Second, func() bool { return b.waiting() == 1 }, "the large reservation waits")
	// A small one that would fit queues behind it (FIFO: no starvation).
	go func() {
		n, _ := b.acquire(ctx, 10)
		got <- n
		b.release(n)
	}()
	testutil.Eventually(t, time.Second, func() bool { return b.waiting() == 2 }, "the small reservation queues")
	b.release(60)
	if n := <-got; n != 100 {
		t.Fatalf("first granted %d, want the clamped 100", n)
	}
	if n := <-got; n != 10 {
		t.Fatalf("second granted %d, want 10", n)
	}
	if now, peak := b.InUse(); now != 0 || peak != 100 {
		t.Fatalf("in use %d, peak %d", now, peak)
	}
}

func TestBudgetWaitEndsWithContext(t *testing.T) {
	b := NewBudget(10)
	ctx := context.Background()
	if _, err := b.acquire(ctx, 10); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := b.acquire(cctx, 8)
		errc <- err
	}()
	testutil.Eventually(t, time.Second, func() bool { return b.waiting() == 1 }, "the reservation waits")
	// One queued behind the cancelled waiter is granted once room is made.
	granted := make(chan struct{})
	go func() {
		if _, err := b.acquire(ctx, 2); err == nil {
			close(granted)
		}
	}()
	testutil.Eventually(t, time.Second, func() bool { return b.waiting() == 2 }, "the second reservation waits")
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
	b.release(2)
	<-granted
	if now, _ := b.InUse(); now != 10 {
		t.Fatalf("in use %d, want 10", now)
	}
}

func TestNilBudgetGrantsEverything(t *testing.T) {
	var b *Budget
	if n, err := b.acquire(context.Background(), 1<<40); err != nil || n != 0 {
		t.Fatalf("nil budget: %d %v", n, err)
	}
	b.release(5)
}

// TestBudgetHoldsUnderConcurrentDecompression decompresses batches of
// every codec from many goroutines over a budget smaller than their sum:
// the bytes held never pass it and all are returned.
func TestBudgetHoldsUnderConcurrentDecompression(t *testing.T) {
	raw := make([]byte, 3<<20)
	for i := range raw {
		raw[i] = byte(i / 1000)
	}
	var srcs [][]byte
	var ids []int
	for _, c := range codecs[1:] {
		comp, err := compress(nil, c.id, raw)
		if err != nil {
			t.Fatal(err)
		}
		srcs, ids = append(srcs, comp), append(ids, c.id)
	}
	b := NewBudget(8 << 20)
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range srcs {
				out, err := decompressRecords(context.Background(), b, ids[i], srcs[i], 0, true, nil)
				if err != nil {
					errs <- err
					return
				}
				if len(out.data) != len(raw) {
					errs <- errors.New("short output")
				}
				out.release()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if now, peak := b.InUse(); now != 0 || peak > b.Size() {
		t.Fatalf("in use %d, peak %d over a budget of %d", now, peak, b.Size())
	}
}

// waiting is the number of queued reservations.
func (b *Budget) waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.waiters.Len()
}

func TestBudgetSize(t *testing.T) {
	if n, err := BudgetSize("", false); err != nil || n != DefaultDecompressionBudget {
		t.Fatalf("unset: %d %v", n, err)
	}
	if n, err := BudgetSize(" 1048576 ", true); err != nil || n != 1<<20 {
		t.Fatalf("1 MiB: %d %v", n, err)
	}
	for _, bad := range []string{"", "0", "-1", "1e9", "lots"} {
		if _, err := BudgetSize(bad, true); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}
