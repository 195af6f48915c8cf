package metadata

import (
	"fmt"
	"log/slog"
	"sync/atomic"
)

// Subscriber is told of every published image with the delta that built it.
// Subscribers run on the loader's caller goroutine (the quorum's apply loop),
// in registration order, so they must not block for long.
type Subscriber func(delta *Delta, image *Image)

// Loader turns committed metadata log entries into published Images: it
// replays each entry's records onto the current image, swaps the published
// pointer and notifies the subscribers. Image is safe to call from any
// goroutine; Apply must be called from one goroutine at a time, in log order.
type Loader struct {
	log         *slog.Logger
	current     atomic.Pointer[Image]
	subscribers []Subscriber
}

// NewLoader returns a loader publishing EmptyImage until the first entry.
func NewLoader(log *slog.Logger, subscribers ...Subscriber) *Loader {
	l := &Loader{log: log, subscribers: subscribers}
	l.current.Store(EmptyImage())
	return l
}

// Image returns the latest published image.
func (l *Loader) Image() *Image { return l.current.Load() }

// Apply replays one committed entry: the records EncodeRecords wrote, at a
// log offset and leader epoch. A bad entry is an error and publishes nothing:
// the log is agreed by the quorum, so the node cannot skip it and stay right.
func (l *Loader) Apply(offset int64, epoch int32, data []byte) error {
	cur := l.current.Load()
	if offset <= cur.offset {
		return fmt.Errorf("metadata: entry offset %d not after image offset %d", offset, cur.offset)
	}
	recs, err := DecodeRecords(data)
	if err != nil {
		return fmt.Errorf("metadata: entry at offset %d: %w", offset, err)
	}
	delta := NewDelta(cur)
	for _, rec := range recs {
		if err := delta.Replay(offset, epoch, rec); err != nil {
			return err
		}
	}
	delta.offset, delta.epoch = offset, epoch
	next := delta.Apply()
	l.current.Store(next)
	l.log.Debug("metadata image published", "offset", offset, "epoch", epoch, "records", len(recs))
	for _, s := range l.subscribers {
		s(delta, next)
	}
	return nil
}
