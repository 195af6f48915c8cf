package producerstate

import (
	"fmt"
	"log/slog"
	"sort"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/vfs"
)

// DefaultProducerIDExpirationMs is producer.id.expiration.ms's default (1 day).
const DefaultProducerIDExpirationMs int64 = 86_400_000

// Options configure a Manager.
type Options struct {
	// Dir is the partition directory holding the .snapshot files.
	Dir string
	// Name names the partition in errors and logs ("topic-0").
	Name string
	FS   vfs.FS
	// Clock gives the time against which loaded snapshots are expired.
	Clock clock.Clock
	// ProducerIDExpirationMs drops producers idle this long when a snapshot
	// is loaded; 0 means DefaultProducerIDExpirationMs.
	ProducerIDExpirationMs int64
	Logger                 *slog.Logger
}

// Manager is the producer state of one partition (Kafka's
// ProducerStateManager). It is not safe for concurrent use: the Log owns it
// and calls it under its own lock, as Kafka's UnifiedLog does.
type Manager struct {
	dir  string
	name string
	fs   vfs.FS
	clk  clock.Clock
	exp  int64
	log  *slog.Logger

	producers map[int64]*Entry
	// ongoing maps the first offset of each open transaction to its producer.
	ongoing map[int64]int64
	// unreplicated holds completed transactions whose marker may still be
	// above the high watermark: first offset -> marker offset.
	unreplicated map[int64]int64

	// mapEndOffset is the offset up to which (exclusive) the state reflects the log.
	mapEndOffset int64
	// lastSnapOffset is the offset of the newest snapshot written or loaded.
	lastSnapOffset int64
	// spareAppend is the last committed Append, for BeginAppend to reuse.
	spareAppend *Append
	// verifications holds the KIP-890 verifications in progress, by
	// producer; lastGuard numbers their guards.
	verifications map[int64]*verificationState
	lastGuard     VerificationGuard
}

// New returns an empty Manager; call TruncateAndReload (or LoadLatest) to
// load the partition's snapshots.
func New(opts Options) *Manager {
	exp := opts.ProducerIDExpirationMs
	if exp <= 0 {
		exp = DefaultProducerIDExpirationMs
	}
	lg := opts.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	fsys := opts.FS
	if fsys == nil {
		fsys = vfs.Default
	}
	clk := opts.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	return &Manager{
		dir: opts.Dir, name: opts.Name, fs: fsys, clk: clk, exp: exp,
		log:          lg.With("partition", opts.Name),
		producers:    map[int64]*Entry{},
		ongoing:      map[int64]int64{},
		unreplicated: map[int64]int64{},
		// Verifications outlive truncation and reloads, as in Kafka: they
		// describe requests in flight, not the log.
		verifications: map[int64]*verificationState{},
	}
}

// Check checks one client batch against the committed state without
// changing it. For several batches of one request use BeginAppend.
func (m *Manager) Check(h records.Header) (Verdict, error) {
	if h.IsControl() {
		return Verdict{}, fmt.Errorf("producer state: clients may not write control batches (offset %d)", h.BaseOffset)
	}
	return m.BeginAppend(OriginClient).AddBatch(h)
}

// Update records a client batch that passed Check and was written (h carries
// its assigned base offset). It re-runs the checks, so a batch that would now
// fail is refused rather than recorded.
func (m *Manager) Update(h records.Header) error {
	a := m.BeginAppend(OriginClient)
	v, err := a.AddBatch(h)
	if err != nil {
		return err
	}
	if v.Duplicate {
		return fmt.Errorf("producer state: batch at offset %d of %s duplicates offsets %d-%d", h.BaseOffset, m.name, v.FirstOffset, v.LastOffset)
	}
	a.Commit()
	return nil
}

// Replay records a data batch read from the log (follower append or
// recovery) without sequence checks. The only error is Kafka's
// INVALID_TXN_STATE for a non-transactional batch inside an open transaction.
func (m *Manager) Replay(h records.Header) error {
	a := m.BeginAppend(OriginReplication)
	if _, err := a.AddBatch(h); err != nil {
		return err
	}
	a.Commit()
	return nil
}

// ReplayMarker records a transaction marker read from the log and returns
// the transaction it completed, if one was open.
func (m *Manager) ReplayMarker(h records.Header, mk Marker) (CompletedTxn, bool, error) {
	a := m.BeginAppend(OriginReplication)
	if err := a.AddMarker(h, mk); err != nil {
		return CompletedTxn{}, false, err
	}
	done := a.Commit()
	if len(done) == 0 {
		return CompletedTxn{}, false, nil
	}
	return done[0], true, nil
}

// Entry returns a copy of a producer's state.
func (m *Manager) Entry(producerID int64) (Entry, bool) {
	e, ok := m.producers[producerID]
	if !ok {
		return Entry{}, false
	}
	return *e.clone(), true
}

// ProducerIDs lists the active producers, sorted.
func (m *Manager) ProducerIDs() []int64 {
	ids := make([]int64, 0, len(m.producers))
	for id := range m.producers {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// Len is the number of active producers.
func (m *Manager) Len() int { return len(m.producers) }

// MapEndOffset is the offset (exclusive) up to which the state reflects the log.
func (m *Manager) MapEndOffset() int64 { return m.mapEndOffset }

// UpdateMapEndOffset moves the map end offset, e.g. after appending batches
// without producer ids, so the next snapshot is named by the log end.
func (m *Manager) UpdateMapEndOffset(offset int64) { m.mapEndOffset = offset }

// isExpired is Kafka's rule: a producer with an open transaction never
// expires; others do when their last timestamp is expirationMs old.
func isExpired(e *Entry, nowMs, expirationMs int64) bool {
	return e.CurrentTxnFirstOffset < 0 && nowMs-e.LastTimestamp >= expirationMs
}

// RemoveExpired drops producers idle for producer.id.expiration.ms, and
// verifications begun that long ago.
func (m *Manager) RemoveExpired(nowMs, expirationMs int64) {
	for id, e := range m.producers {
		if isExpired(e, nowMs, expirationMs) {
			delete(m.producers, id)
		}
	}
	m.removeExpiredVerifications(nowMs, expirationMs)
}

// FirstUnstableOffset is the first offset of the oldest transaction that is
// open or whose marker may not be replicated yet; ok is false when there is
// none (then the last stable offset is the high watermark).
func (m *Manager) FirstUnstableOffset() (offset int64, ok bool) {
	offset, ok = minKey(m.ongoing)
	if u, uok := minKey(m.unreplicated); uok && (!ok || u < offset) {
		offset, ok = u, true
	}
	return offset, ok
}

// FirstUndecidedOffset is the first offset of the oldest open transaction.
func (m *Manager) FirstUndecidedOffset() (int64, bool) { return minKey(m.ongoing) }

// OnHighWatermarkUpdated forgets completed transactions whose marker is
// below the high watermark, letting the first unstable offset advance.
func (m *Manager) OnHighWatermarkUpdated(highWatermark int64) { m.removeUnreplicated(highWatermark) }

// OnLogStartOffsetIncremented drops completed transactions below the new log
// start and moves the map end forward if the log start passed it. The only
// error is failing to list the snapshots.
func (m *Manager) OnLogStartOffsetIncremented(logStartOffset int64) error {
	m.removeUnreplicated(logStartOffset)
	if m.mapEndOffset < logStartOffset {
		m.mapEndOffset = logStartOffset
	}
	offs, err := m.SnapshotOffsets()
	if err != nil {
		return err
	}
	m.lastSnapOffset = logStartOffset
	if len(offs) > 0 {
		m.lastSnapOffset = offs[len(offs)-1]
	}
	return nil
}

func (m *Manager) removeUnreplicated(below int64) {
	for first, markerOffset := range m.unreplicated {
		if markerOffset < below {
			delete(m.unreplicated, first)
		}
	}
}

// lastStableOffset is where the LSO stands once ct completes: the first
// offset of the oldest open transaction of another producer, or just past
// the marker.
func (m *Manager) lastStableOffset(ct CompletedTxn) int64 {
	best, found := int64(0), false
	for first, pid := range m.ongoing {
		if pid != ct.ProducerID && (!found || first < best) {
			best, found = first, true
		}
	}
	if found {
		return best
	}
	return ct.LastOffset + 1
}

func (m *Manager) completeTxn(ct CompletedTxn) {
	if _, ok := m.ongoing[ct.FirstOffset]; !ok {
		// The staged entry said a transaction was open; the map not knowing it
		// means the state was loaded inconsistently. Keep going, as a replica must.
		m.log.Warn("completed a transaction that was not tracked as ongoing", "producer", ct.ProducerID, "firstOffset", ct.FirstOffset)
	}
	delete(m.ongoing, ct.FirstOffset)
	m.unreplicated[ct.FirstOffset] = ct.LastOffset
}

// loadEntry installs an entry read from a snapshot.
func (m *Manager) loadEntry(e *Entry) {
	m.producers[e.ProducerID] = e
	if e.CurrentTxnFirstOffset >= 0 {
		m.ongoing[e.CurrentTxnFirstOffset] = e.ProducerID
	}
}

func (m *Manager) clear() {
	m.producers = map[int64]*Entry{}
	m.ongoing = map[int64]int64{}
	m.unreplicated = map[int64]int64{}
}

func minKey(mp map[int64]int64) (int64, bool) {
	best, ok := int64(0), false
	for k := range mp {
		if !ok || k < best {
			best, ok = k, true
		}
	}
	return best, ok
}

// LateTransactionBufferMs is the slack Kafka allows past the transaction
// timeout before it calls an open transaction hanging.
const LateTransactionBufferMs int64 = 5 * 60 * 1000

// HasLateTransaction reports whether the oldest open transaction's producer
// has been silent longer than the transaction timeout plus
// LateTransactionBufferMs: a hanging transaction that holds back the last
// stable offset (Kafka's metric and its KIP-664 tooling look for these).
func (m *Manager) HasLateTransaction(nowMs, maxTransactionTimeoutMs int64) bool {
	first, ok := minKey(m.ongoing)
	if !ok {
		return false
	}
	e, ok := m.producers[m.ongoing[first]]
	if !ok || e.LastTimestamp <= 0 {
		return false
	}
	return nowMs-e.LastTimestamp > maxTransactionTimeoutMs+LateTransactionBufferMs
}
