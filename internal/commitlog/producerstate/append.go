package producerstate

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/records"
)

// Origin says where an append comes from, which decides how much is checked.
type Origin int

const (
	// OriginClient is a produce request: epochs, sequences and duplicates are checked.
	OriginClient Origin = iota
	// OriginCoordinator is a write of the group or transaction coordinator
	// (offset commits, transaction markers): epochs are checked, sequences are not.
	OriginCoordinator
	// OriginReplication is a follower copying the leader, or recovery replaying
	// the log: the leader already checked, so stale epochs are only logged.
	OriginReplication
)

func (o Origin) String() string {
	switch o {
	case OriginClient:
		return "client"
	case OriginCoordinator:
		return "coordinator"
	case OriginReplication:
		return "replication"
	}
	return fmt.Sprintf("origin(%d)", int(o))
}

// Verdict is the outcome of checking one batch that passed the checks.
type Verdict struct {
	// Duplicate is set when the batch repeats one of the producer's last five
	// batches: nothing of the append may be written, and the produce response
	// acknowledges the original's offsets below.
	Duplicate bool
	// FirstOffset, LastOffset and Timestamp describe the original batch of a duplicate.
	FirstOffset int64
	LastOffset  int64
	Timestamp   int64
}

// Marker is the content of a transaction marker (the control record of a
// control batch), decoded by the caller.
type Marker struct {
	// Commit is true for a COMMIT marker, false for ABORT.
	Commit           bool
	CoordinatorEpoch int32
	// TxnVersion is the transaction protocol version the coordinator used
	// (WriteTxnMarkers v2+, KIP-890); 0 for markers of older versions and for
	// replication, where the log does not carry it.
	TxnVersion int16
}

// CompletedTxn is a transaction whose marker was appended.
type CompletedTxn struct {
	ProducerID  int64
	FirstOffset int64
	// LastOffset is the marker's offset.
	LastOffset int64
	IsAborted  bool
	// LastStableOffset is the partition's last stable offset once this
	// transaction completes, computed before it was marked complete: the
	// value the transaction index records for an aborted transaction.
	LastStableOffset int64
}

// txnStart records a transaction begun by a staged batch.
type txnStart struct {
	producerID  int64
	firstOffset int64
}

// staged is the pending update of one producer within an Append, like
// Kafka's ProducerAppendInfo. updated starts as the committed entry without
// its batches (they stay in the committed entry and are merged back on
// commit); its batches live in batchBuf, so staging allocates nothing.
type staged struct {
	committed *Entry // the entry before this append (empty for a new producer)
	updated   Entry
	batchBuf  [BatchesToRetain]BatchMetadata
	started   []txnStart
	// transactional is set by a transactional batch or a marker that
	// spends the producer's verification state: either opens the
	// transaction or ends it (Kafka's updateProducers clears it; see
	// keepsVerification for the marker that does not).
	transactional bool
}

func (s *staged) reset(committed *Entry) {
	s.committed = committed
	s.updated = *committed
	s.updated.batches = s.batchBuf[:0]
	s.started = nil
	s.transactional = false
}

// Append collects the producer-state changes of one log append (one or more
// batches, all with offsets already assigned) without changing the Manager;
// Commit applies them once the batches are written. Abandoning an Append
// (on a check error, a duplicate or a failed write) leaves the state as it was.
//
// Almost every append carries the batches of a single producer (a produce
// request holds one batch per partition), so the first producer is staged
// inside the Append itself and only further ones take a map entry.
type Append struct {
	m        *Manager
	origin   Origin
	first    staged
	firstPID int64
	hasFirst bool
	more     map[int64]*staged // producers after the first, created on demand
	order    []int64           // ids in more, in first-seen order, so Commit is deterministic
	// completed is handed to the caller by Commit.
	completed []CompletedTxn
	nextEnd   int64
	// verify and guard: see RequireVerification.
	verify bool
	guard  VerificationGuard
}

// BeginAppend starts staging an append of the given origin. The Append of
// the last Commit is reused (the caller may not touch an Append after
// committing it), so the produce path allocates no staging per append; an
// abandoned Append is simply dropped.
func (m *Manager) BeginAppend(origin Origin) *Append {
	a := m.spareAppend
	if a == nil {
		a = &Append{}
	}
	m.spareAppend = nil
	*a = Append{m: m, origin: origin, nextEnd: -1}
	return a
}

// RequireVerification turns on KIP-890's check for this append (the
// leader's, with transaction verification enabled): a transactional batch of
// a producer with no ongoing transaction is refused with INVALID_TXN_STATE
// unless guard is the producer's current verification guard. Replication
// appends are never checked.
func (a *Append) RequireVerification(guard VerificationGuard) {
	a.verify, a.guard = true, guard
}

// missingVerification is Kafka's batchMissingRequiredVerification, asked
// only when the producer has no ongoing transaction.
func (a *Append) missingVerification(h records.Header) bool {
	if !a.verify || a.origin == OriginReplication || !h.IsTransactional() || a.m.HasOngoingTransaction(h.ProducerID, h.ProducerEpoch) {
		return false
	}
	return a.guard == 0 || a.m.VerificationGuardOf(h.ProducerID) != a.guard
}

func (a *Append) stagedFor(producerID int64) *staged {
	if a.hasFirst && a.firstPID == producerID {
		return &a.first
	}
	if s, ok := a.more[producerID]; ok {
		return s
	}
	committed, ok := a.m.producers[producerID]
	if !ok {
		committed = emptyEntry(producerID)
	}
	if !a.hasFirst {
		a.first.reset(committed)
		a.firstPID, a.hasFirst = producerID, true
		return &a.first
	}
	s := &staged{}
	s.reset(committed)
	if a.more == nil {
		a.more = map[int64]*staged{}
	}
	a.more[producerID] = s
	a.order = append(a.order, producerID)
	return s
}

// AddBatch checks a data batch (for its origin) and stages its effect. h must
// carry the batch's assigned base offset. A batch without a producer id is
// ignored. A Verdict with Duplicate set is returned only for client appends;
// the caller must then write nothing and answer with the original's offsets.
func (a *Append) AddBatch(h records.Header) (Verdict, error) {
	if h.IsControl() {
		return Verdict{}, fmt.Errorf("producer state: control batch at offset %d needs AddMarker", h.BaseOffset)
	}
	if !h.HasProducerID() {
		a.noteEnd(h)
		return Verdict{}, nil
	}
	if a.origin == OriginClient {
		// Duplicates are looked up in the committed state only, as Kafka does:
		// a retry of a batch of this very request is not a duplicate.
		if e, ok := a.m.producers[h.ProducerID]; ok {
			if b, dup := e.duplicateOf(h.ProducerEpoch, h.BaseSequence, h.LastSequence()); dup {
				return Verdict{Duplicate: true, FirstOffset: b.FirstOffset(), LastOffset: b.LastOffset, Timestamp: b.Timestamp}, nil
			}
		}
	}
	if a.missingVerification(h) {
		if err := a.m.checkStaleEpoch(h.ProducerID, h.ProducerEpoch); err != nil {
			return Verdict{}, err
		}
		return Verdict{}, fmt.Errorf("%w: producer %d batch at offset %d of %s was not part of an ongoing transaction (not verified with the transaction coordinator)",
			kerr.InvalidTxnState, h.ProducerID, h.BaseOffset, a.m.name)
	}
	s := a.stagedFor(h.ProducerID)
	if err := a.checkEpoch(s, h.ProducerEpoch, h.BaseOffset, 0); err != nil {
		return Verdict{}, err
	}
	if a.origin == OriginClient {
		if err := a.checkSequence(s, h.ProducerEpoch, h.BaseSequence, h.BaseOffset); err != nil {
			return Verdict{}, err
		}
	}
	u := &s.updated
	if u.CurrentTxnFirstOffset >= 0 && !h.IsTransactional() {
		return Verdict{}, fmt.Errorf("%w: producer %d wrote a non-transactional batch at offset %d of %s while its transaction from offset %d is open",
			kerr.InvalidTxnState, h.ProducerID, h.BaseOffset, a.m.name, u.CurrentTxnFirstOffset)
	}
	u.addBatch(h.ProducerEpoch, BatchMetadata{
		LastSeq:     h.LastSequence(),
		LastOffset:  h.LastOffset(),
		OffsetDelta: h.LastOffsetDelta,
		Timestamp:   h.MaxTimestamp,
	})
	s.transactional = s.transactional || h.IsTransactional()
	if u.CurrentTxnFirstOffset < 0 && h.IsTransactional() {
		u.CurrentTxnFirstOffset = h.BaseOffset
		s.started = append(s.started, txnStart{producerID: h.ProducerID, firstOffset: h.BaseOffset})
	}
	a.noteEnd(h)
	return Verdict{}, nil
}

// AddMarker checks a transaction marker (a control batch; h carries its
// assigned offset) and stages the end of the producer's transaction.
func (a *Append) AddMarker(h records.Header, mk Marker) error {
	if !h.IsControl() {
		return fmt.Errorf("producer state: batch at offset %d is not a control batch", h.BaseOffset)
	}
	if !h.HasProducerID() {
		return fmt.Errorf("producer state: control batch at offset %d has no producer id", h.BaseOffset)
	}
	s := a.stagedFor(h.ProducerID)
	tv := mk.TxnVersion
	if a.origin == OriginReplication {
		// The log does not record the version; the legacy rule is the weaker one,
		// so every marker the leader accepted passes it.
		tv = 0
	}
	if err := a.checkEpoch(s, h.ProducerEpoch, h.BaseOffset, tv); err != nil {
		return err
	}
	u := &s.updated
	if u.CoordinatorEpoch > mk.CoordinatorEpoch {
		if a.origin != OriginReplication {
			return fmt.Errorf("%w: producer %d marker at offset %d of %s has coordinator epoch %d, older than %d",
				kerr.TransactionCoordinatorFenced, h.ProducerID, h.BaseOffset, a.m.name, mk.CoordinatorEpoch, u.CoordinatorEpoch)
		}
		a.m.log.Info("marker with stale coordinator epoch replicated", "producer", h.ProducerID,
			"offset", h.BaseOffset, "coordinatorEpoch", mk.CoordinatorEpoch, "known", u.CoordinatorEpoch)
	}
	// A marker with no open transaction (its data was cleaned away, or the
	// transaction was empty) changes no stable offset.
	if u.CurrentTxnFirstOffset >= 0 {
		a.completed = append(a.completed, CompletedTxn{
			ProducerID:  h.ProducerID,
			FirstOffset: u.CurrentTxnFirstOffset,
			LastOffset:  h.BaseOffset,
			IsAborted:   !mk.Commit,
		})
	}
	s.transactional = s.transactional || !a.m.keepsVerification(h.ProducerID, h.ProducerEpoch)
	u.setEpoch(h.ProducerEpoch)
	u.CoordinatorEpoch = mk.CoordinatorEpoch
	u.CurrentTxnFirstOffset = -1
	u.LastTimestamp = h.MaxTimestamp
	a.noteEnd(h)
	return nil
}

func (a *Append) noteEnd(h records.Header) {
	if n := h.NextOffset(); n > a.nextEnd {
		a.nextEnd = n
	}
}

// checkEpoch fences producers older than the one the partition knows. With
// transactions v2 (KIP-890) each marker bumps the epoch, so a marker must
// carry a strictly higher epoch, except a retry of a marker already written.
func (a *Append) checkEpoch(s *staged, epoch int16, offset int64, txnVersion int16) error {
	current := s.updated.ProducerEpoch
	invalid := epoch < current
	if txnVersion >= 2 {
		invalid = epoch <= current
		if epoch == current && s.updated.CurrentTxnFirstOffset < 0 {
			return nil
		}
	}
	if !invalid {
		return nil
	}
	if a.origin == OriginReplication {
		a.m.log.Warn("replicated batch with stale producer epoch", "producer", s.updated.ProducerID,
			"offset", offset, "epoch", epoch, "known", current)
		return nil
	}
	return fmt.Errorf("%w: producer %d at offset %d of %s has epoch %d, last seen epoch %d",
		kerr.InvalidProducerEpoch, s.updated.ProducerID, offset, a.m.name, epoch, current)
}

// checkSequence enforces that a client batch continues the producer's
// sequence. A new epoch must start at 0. A producer the partition does not
// know (never seen, expired, or its data deleted) may start anywhere: Kafka
// gives up UNKNOWN_PRODUCER_ID here since KIP-360, so neither do we.
func (a *Append) checkSequence(s *staged, epoch int16, firstSeq int32, offset int64) error {
	u, c := &s.updated, s.committed
	if v, ok := a.m.verifications[u.ProducerID]; ok && firstSeq > v.lowestSeq {
		// A lower sequence is still verifying (it failed with a retriable
		// error): this one may not overtake it.
		return fmt.Errorf("%w: producer %d at offset %d of %s sent sequence %d while sequence %d awaits verification",
			kerr.OutOfOrderSequenceNumber, u.ProducerID, offset, a.m.name, firstSeq, v.lowestSeq)
	}
	if epoch != u.ProducerEpoch {
		if firstSeq != 0 && u.ProducerEpoch != kafka.NoProducerEpoch {
			return fmt.Errorf("%w: producer %d at offset %d of %s starts new epoch %d (was %d) at sequence %d, not 0",
				kerr.OutOfOrderSequenceNumber, u.ProducerID, offset, a.m.name, epoch, u.ProducerEpoch, firstSeq)
		}
		return nil
	}
	lastSeq := kafka.NoSequence
	switch {
	case !u.IsEmpty():
		lastSeq = u.LastSeq()
	case epoch == c.ProducerEpoch:
		lastSeq = c.LastSeq()
	}
	if c.ProducerEpoch == kafka.NoProducerEpoch || inSequence(lastSeq, firstSeq) {
		return nil
	}
	return fmt.Errorf("%w: producer %d at offset %d of %s sent sequence %d, expected %d",
		kerr.OutOfOrderSequenceNumber, u.ProducerID, offset, a.m.name, firstSeq, nextSequence(lastSeq))
}

func nextSequence(seq int32) int32 {
	if seq == 1<<31-1 {
		return 0
	}
	return seq + 1
}

// Commit applies the staged changes after the batches were written:
// producers are updated, started transactions become ongoing, completed ones
// move to the unreplicated set, and the map end offset advances past the
// append. It returns the completed transactions with their last stable
// offsets (for the transaction index). An Append is committed at most once.
func (a *Append) Commit() []CompletedTxn {
	m := a.m
	if a.hasFirst {
		m.commitStaged(a.firstPID, &a.first)
	}
	for _, pid := range a.order {
		m.commitStaged(pid, a.more[pid])
	}
	for i := range a.completed {
		ct := &a.completed[i]
		ct.LastStableOffset = m.lastStableOffset(*ct)
		m.completeTxn(*ct)
	}
	if a.nextEnd > m.mapEndOffset {
		m.mapEndOffset = a.nextEnd
	}
	done := a.completed
	a.hasFirst, a.more, a.order, a.completed = false, nil, nil, nil
	m.spareAppend = a
	return done
}

// commitStaged applies one producer's staged update. A new producer gets an
// entry of its own: the staged one's batches live in the Append.
func (m *Manager) commitStaged(pid int64, s *staged) {
	if e, ok := m.producers[pid]; ok {
		e.merge(&s.updated)
	} else {
		m.producers[pid] = s.updated.clone()
	}
	for _, t := range s.started {
		m.ongoing[t.firstOffset] = t.producerID
	}
	if s.transactional {
		delete(m.verifications, pid)
	}
}
