package txn

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/kafka"
)

// txnMetadata is one transactional id's state (Kafka's
// TransactionMetadata). Timestamps are epoch milliseconds as in the log.
type txnMetadata struct {
	id string
	// producerID is in use; prevProducerID was in use before the last
	// transition; nextProducerID is the id the producer moves to once the
	// transaction being completed is complete (TV2 epoch exhaustion).
	producerID, prevProducerID, nextProducerID int64
	// lastProducerEpoch lets a retried InitProducerId or EndTxn be told
	// from a fenced one; it is not in the log, so -1 after a load.
	producerEpoch, lastProducerEpoch int16
	timeoutMs                        int32
	state                            State
	partitions                       map[kafka.TopicPartition]struct{}
	startTimestamp                   int64 // -1 when no transaction started
	lastUpdateTimestamp              int64
	clientVersion                    TransactionVersion

	// pending is the state of the transition in flight, if hasPending.
	pending    State
	hasPending bool
	// failedEpochFence: a fencing abort's write failed after the epoch was
	// raised in memory; the next fence does not raise it again.
	failedEpochFence bool
	// completion is the CompleteCommit/CompleteAbort transition waiting for
	// the markers (pending is its state).
	completion *transit
	// completionInFlight: the completion's write is out.
	completionInFlight bool
}

// transit is a transition prepared and waiting for its record to be
// durable (Kafka's TxnTransitMetadata); its fields start as the current
// ones.
type transit struct {
	producerID, prevProducerID, nextProducerID int64
	producerEpoch, lastProducerEpoch           int16
	timeoutMs                                  int32
	state                                      State
	partitions                                 map[kafka.TopicPartition]struct{}
	startTimestamp, lastUpdateTimestamp        int64
	clientVersion                              TransactionVersion
}

func newTxnMetadata(id string, producerID int64, timeoutMs int32, nowMs int64) *txnMetadata {
	return &txnMetadata{
		id: id, producerID: producerID, prevProducerID: -1, nextProducerID: -1,
		producerEpoch: -1, lastProducerEpoch: -1, timeoutMs: timeoutMs, state: Empty,
		partitions: map[kafka.TopicPartition]struct{}{}, startTimestamp: -1, lastUpdateTimestamp: nowMs,
	}
}

// begin starts a transition to state from the current fields.
func (t *txnMetadata) begin(state State) transit {
	return transit{
		producerID: t.producerID, nextProducerID: t.nextProducerID,
		producerEpoch: t.producerEpoch, lastProducerEpoch: t.lastProducerEpoch,
		timeoutMs: t.timeoutMs, state: state, partitions: t.partitions,
		startTimestamp: t.startTimestamp, lastUpdateTimestamp: t.lastUpdateTimestamp,
		clientVersion: t.clientVersion,
	}
}

// prepare makes tr the pending transition (Kafka's prepareTransitionTo);
// an illegal one is UNKNOWN_SERVER_ERROR, as Kafka's IllegalStateException
// reaches the client.
func (t *txnMetadata) prepare(tr transit) (transit, int16) {
	switch {
	case t.hasPending, tr.producerID < 0, tr.state != Dead && tr.producerEpoch < 0, !canEnter(tr.state, t.state):
		return transit{}, kerr.UnknownServerError.Code
	}
	tr.prevProducerID = t.producerID
	t.pending, t.hasPending = tr.state, true
	return tr, 0
}

// complete applies a durable transition.
func (t *txnMetadata) complete(tr transit) {
	t.producerID, t.prevProducerID, t.nextProducerID = tr.producerID, tr.prevProducerID, tr.nextProducerID
	t.producerEpoch, t.lastProducerEpoch = tr.producerEpoch, tr.lastProducerEpoch
	t.timeoutMs, t.state, t.partitions = tr.timeoutMs, tr.state, tr.partitions
	t.startTimestamp, t.lastUpdateTimestamp = tr.startTimestamp, tr.lastUpdateTimestamp
	t.clientVersion = tr.clientVersion
	t.hasPending = false
}

func (t *txnMetadata) pendingIs(s State) bool { return t.hasPending && t.pending == s }

// prepareFenceProducerEpoch raises the epoch to fence the producer before
// its transaction is aborted; the raised epoch is never returned. Under
// TV2 it is only the abort's request epoch: the abort bumps the epoch.
func (t *txnMetadata) prepareFenceProducerEpoch() (transit, int16) {
	tr := t.begin(PrepareEpochFence)
	// A fence whose write failed already raised the epoch; at the maximum
	// there is nothing left to raise to (Kafka logs it as a bug).
	if !t.failedEpochFence && t.producerEpoch != maxEpoch {
		tr.producerEpoch++
	}
	return t.prepare(tr)
}

// prepareIncrementProducerEpoch is InitProducerId's bump. expected is the
// client's epoch when it gave one (KIP-360).
func (t *txnMetadata) prepareIncrementProducerEpoch(timeoutMs int32, expected *int16, nowMs int64) (transit, int16) {
	if epochExhausted(t.producerEpoch) {
		return transit{}, kerr.UnknownServerError.Code
	}
	tr := t.begin(Empty)
	switch {
	case expected == nil:
		tr.producerEpoch, tr.lastProducerEpoch = t.producerEpoch+1, -1
	case t.producerEpoch == -1 || *expected == t.producerEpoch:
		// A new id, or the producer recovering with no other one started.
		tr.producerEpoch, tr.lastProducerEpoch = t.producerEpoch+1, t.producerEpoch
	case *expected == t.lastProducerEpoch:
		// A retry of a bump that succeeded: answer the current epoch.
	default:
		return transit{}, kerr.ProducerFenced.Code
	}
	tr.timeoutMs, tr.partitions = timeoutMs, map[kafka.TopicPartition]struct{}{}
	tr.startTimestamp, tr.lastUpdateTimestamp = -1, nowMs
	return t.prepare(tr)
}

// prepareProducerIDRotation moves an exhausted producer to a new id.
func (t *txnMetadata) prepareProducerIDRotation(newID int64, timeoutMs int32, nowMs int64, recordLastEpoch bool) (transit, int16) {
	if t.state == Ongoing || t.state == PrepareCommit || t.state == PrepareAbort {
		return transit{}, kerr.UnknownServerError.Code
	}
	tr := t.begin(Empty)
	tr.producerID, tr.producerEpoch, tr.lastProducerEpoch = newID, 0, -1
	if recordLastEpoch {
		tr.lastProducerEpoch = t.producerEpoch
	}
	tr.timeoutMs, tr.partitions = timeoutMs, map[kafka.TopicPartition]struct{}{}
	tr.startTimestamp, tr.lastUpdateTimestamp = -1, nowMs
	return t.prepare(tr)
}

func (t *txnMetadata) prepareAddPartitions(add []kafka.TopicPartition, nowMs int64, v TransactionVersion) (transit, int16) {
	tr := t.begin(Ongoing)
	if t.state == Empty || t.state == CompleteCommit || t.state == CompleteAbort {
		tr.startTimestamp = nowMs
	}
	tr.partitions = maps.Clone(t.partitions)
	for _, tp := range add {
		tr.partitions[tp] = struct{}{}
	}
	tr.lastUpdateTimestamp, tr.clientVersion = nowMs, v
	return t.prepare(tr)
}

// prepareAbortOrCommit decides the transaction. Under TV2 the epoch is
// bumped (the markers carry the new one); nextID is the id to move to when
// the epoch is exhausted, else -1. An abort with no partition added (TV2)
// starts its transaction now.
func (t *txnMetadata) prepareAbortOrCommit(state State, v TransactionVersion, nextID int64, nowMs int64, noPartitionAdded bool) (transit, int16) {
	tr := t.begin(state)
	if v.SupportsEpochBump() {
		// An abort at the maximum epoch (only a broken fence gets there)
		// goes through without a bump, so that the id recovers.
		if t.producerEpoch != maxEpoch || state != PrepareAbort {
			tr.producerEpoch = t.producerEpoch + 1
		}
		tr.lastProducerEpoch = t.producerEpoch
	}
	if noPartitionAdded {
		tr.startTimestamp = nowMs
	}
	tr.nextProducerID, tr.lastUpdateTimestamp, tr.clientVersion = nextID, nowMs, v
	return t.prepare(tr)
}

// prepareComplete is the transition once the markers are written; it
// moves an exhausted TV2 producer to its next id with epoch 0 (the last
// epoch stays the one the client last saw).
func (t *txnMetadata) prepareComplete(nowMs int64) (transit, int16) {
	t.failedEpochFence = false
	state := CompleteAbort
	if t.state == PrepareCommit {
		state = CompleteCommit
	}
	tr := t.begin(state)
	if t.clientVersion.SupportsEpochBump() && t.nextProducerID != -1 {
		tr.producerID, tr.producerEpoch = t.nextProducerID, 0
	}
	tr.nextProducerID, tr.partitions, tr.lastUpdateTimestamp = -1, map[kafka.TopicPartition]struct{}{}, nowMs
	return t.prepare(tr)
}

func (t *txnMetadata) prepareDead() (transit, int16) {
	tr := t.begin(Dead)
	tr.partitions = map[kafka.TopicPartition]struct{}{}
	return t.prepare(tr)
}

// sortedPartitions returns the partitions in topic, partition order.
func sortedPartitions(set map[kafka.TopicPartition]struct{}) []kafka.TopicPartition {
	out := slices.Collect(maps.Keys(set))
	slices.SortFunc(out, func(a, b kafka.TopicPartition) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return int(a.Partition) - int(b.Partition)
	})
	return out
}
