package share

import (
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Partition is the state of one share partition (a group's view of one
// topic partition) on the partition's leader: Kafka's SharePartition. It is
// not safe for concurrent use; one goroutine drives it and passes the time
// in.
type Partition struct {
	cfg                     Config
	leaderEpoch, stateEpoch int32
	// start is the share-partition start offset (SPSO): every offset below
	// it is acknowledged or archived. Invariant: start <= the first offset
	// of every in-flight record that can still be delivered.
	start int64
	// end is the share-partition end offset (SPEO): the last offset in
	// flight, or start while nothing is (Kafka's endOffset).
	end int64
	// batches are the in-flight ranges. Invariant: sorted, never
	// overlapping; a hole between two is a gap of the persisted state (see
	// gap) or offsets the log does not hold.
	batches []*inflight
	// findNext asks NextFetchOffset to look for available records inside
	// the window instead of answering end+1.
	findNext bool
	// gap is Kafka's persister read-gap window: after a load whose batches
	// left holes, offsets from gap.start in holes up to gap.end were
	// fetched by a previous leader but never acknowledged, so they are
	// fetched and acquired again. It holds while end == gap.end.
	gap *gapWindow
	// writes are the writes handed out and not yet done, by ID.
	writes map[uint64]*pendingWrite
	lastID uint64
}

type gapWindow struct{ end, start int64 }

// NewPartition loads a share partition from the state the share
// coordinator returned (Kafka's SharePartition.maybeInitialize). When
// st.StartOffset is UninitializedStartOffset the partition starts at
// resetOffset, the offset share.auto.offset.reset resolves to (latest,
// earliest or by_duration, as the caller found it in the log).
func NewPartition(cfg Config, leaderEpoch int32, st PersistedState, resetOffset int64) (*Partition, error) {
	p := &Partition{cfg: cfg, leaderEpoch: leaderEpoch, stateEpoch: st.StateEpoch, writes: map[uint64]*pendingWrite{}}
	p.start = st.StartOffset
	if p.start == UninitializedStartOffset {
		p.start = resetOffset
	}
	if p.start < 0 {
		return nil, errf(kerr.UnknownServerError, "share partition start offset %d", p.start)
	}
	gapStart, prevLast := int64(-1), p.start-1
	for _, sb := range st.Batches {
		if sb.FirstOffset <= prevLast || sb.LastOffset < sb.FirstOffset {
			return nil, errf(kerr.UnknownServerError, "state batch %d-%d below start offset %d or out of order", sb.FirstOffset, sb.LastOffset, p.start)
		}
		state := sb.DeliveryState
		switch state {
		case Available, Acknowledged, Archived:
		case Acquired:
			// Kafka never persists an acquisition; a record persisted as
			// acquired has no owner here, so it is delivered again.
			state = Available
		default:
			return nil, errf(kerr.UnknownServerError, "state batch %d-%d has unknown state %d", sb.FirstOffset, sb.LastOffset, sb.DeliveryState)
		}
		if gapStart == -1 && sb.FirstOffset > prevLast+1 {
			gapStart = prevLast + 1
		}
		prevLast = sb.LastOffset
		p.batches = append(p.batches, &inflight{first: sb.FirstOffset, last: sb.LastOffset, batch: recState{state: state, count: int(sb.DeliveryCount)}})
	}
	p.end = p.start
	if len(p.batches) > 0 {
		p.findNext = true
		p.end = p.batches[len(p.batches)-1].last
		if gapStart != -1 {
			p.gap = &gapWindow{end: p.end, start: gapStart}
		}
		p.advance()
	}
	return p, nil
}

// SetConfig changes the limits, as a group config update does; records
// already acquired keep their lock deadlines.
func (p *Partition) SetConfig(cfg Config) { p.cfg = cfg }

// StartOffset returns the share-partition start offset (SPSO).
func (p *Partition) StartOffset() int64 { return p.start }

// EndOffset returns the share-partition end offset (SPEO).
func (p *Partition) EndOffset() int64 { return p.end }

// StateEpoch returns the state epoch the partition was loaded with.
func (p *Partition) StateEpoch() int32 { return p.stateEpoch }

// LeaderEpoch returns the leader epoch the partition was loaded for.
func (p *Partition) LeaderEpoch() int32 { return p.leaderEpoch }

// inFlight is the size of the window (Kafka's numInFlightRecords).
func (p *Partition) inFlight() int64 {
	if len(p.batches) == 0 {
		return 0
	}
	return p.end - p.start + 1
}

func (p *Partition) gapActive() bool { return p.gap != nil && p.gap.end == p.end }

// floor returns the index of the last batch starting at or before o, -1
// when none does.
func (p *Partition) floor(o int64) int {
	return sort.Search(len(p.batches), func(i int) bool { return p.batches[i].first > o }) - 1
}

// between returns the indexes [i, j) of the batches starting in [lo, hi].
func (p *Partition) between(lo, hi int64) (int, int) {
	i := sort.Search(len(p.batches), func(i int) bool { return p.batches[i].first >= lo })
	j := sort.Search(len(p.batches), func(i int) bool { return p.batches[i].first > hi })
	return i, max(i, j)
}

func (p *Partition) insert(b *inflight) {
	i := sort.Search(len(p.batches), func(i int) bool { return p.batches[i].first > b.first })
	p.batches = slices.Insert(p.batches, i, b)
}

// NextFetchOffset returns the offset the next fetch for this share
// partition reads the log from: the first available record in flight, the
// first offset of a gap to refetch, or the offset past the window.
func (p *Partition) NextFetchOffset() int64 {
	emptyOrBehind := len(p.batches) == 0 || p.start > p.batches[len(p.batches)-1].last
	if !p.findNext || emptyOrBehind {
		if emptyOrBehind {
			p.findNext = false
			return p.end
		}
		return p.end + 1
	}
	gapStart := int64(-1)
	if p.gapActive() {
		gapStart = p.gap.start
	}
	for _, b := range p.batches {
		if p.gapActive() {
			if b.first > gapStart {
				return gapStart
			}
			gapStart = max(b.last+1, gapStart)
		}
		if o, ok := b.firstAvailable(b.first); ok {
			return o
		}
	}
	p.findNext = false
	return p.end + 1
}

// firstAvailable returns the first offset at or after from that can be
// acquired.
func (b *inflight) firstAvailable(from int64) (int64, bool) {
	if b.offsets == nil {
		return b.first, b.batch.state == Available && b.batch.pend == nil && from <= b.first
	}
	for o := max(from, b.first); o <= b.last; o++ {
		if r := b.at(o); r.state == Available && r.pend == nil {
			return o, true
		}
	}
	return 0, false
}

// CanAcquire reports whether a fetch could acquire records: some in flight
// are available again, or the window has room for new ones (Kafka's
// canAcquireRecords).
func (p *Partition) CanAcquire() bool {
	if p.NextFetchOffset() != p.end+1 {
		return true
	}
	return p.inFlight() < int64(p.cfg.MaxInFlightRecords)
}

// Snapshot returns the in-flight state as state batches, per offset where
// the batch is split, for tests and for describing the partition.
func (p *Partition) Snapshot() []StateBatch {
	var out []StateBatch
	for _, b := range p.batches {
		if b.offsets == nil {
			out = append(out, StateBatch{b.first, b.last, b.batch.state, int16(b.batch.count)})
			continue
		}
		for o := b.first; o <= b.last; o++ {
			r := b.at(o)
			out = append(out, StateBatch{o, o, r.state, int16(r.count)})
		}
	}
	return out
}
