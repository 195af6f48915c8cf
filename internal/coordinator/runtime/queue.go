package runtime

import "sync"

// queue is an unbounded FIFO with a wake-up channel: producers never block,
// so a shard's loop and its writer can hand work to each other without
// risking a deadlock on full channels.
type queue[T any] struct {
	mu     sync.Mutex
	items  []T
	notify chan struct{}
}

func newQueue[T any]() *queue[T] { return &queue[T]{notify: make(chan struct{}, 1)} }

func (q *queue[T]) push(v T) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

// drain takes everything queued.
func (q *queue[T]) drain() []T {
	q.mu.Lock()
	items := q.items
	q.items = nil
	q.mu.Unlock()
	return items
}
