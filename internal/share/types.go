package share

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// RecordState is the state of an in-flight record, with Kafka's ids (the
// DeliveryState of a persisted state batch).
type RecordState int8

// Kafka's RecordState ids. Kafka 4.4 also has ARCHIVING (3), used only
// while a record is written to a dead-letter queue; Sluice has no DLQ.
const (
	Available    RecordState = 0
	Acquired     RecordState = 1
	Acknowledged RecordState = 2
	Archived     RecordState = 4
)

func (s RecordState) String() string {
	switch s {
	case Available:
		return "AVAILABLE"
	case Acquired:
		return "ACQUIRED"
	case Acknowledged:
		return "ACKNOWLEDGED"
	case Archived:
		return "ARCHIVED"
	}
	return fmt.Sprintf("STATE(%d)", int8(s))
}

// terminal reports whether s is a final state: the record is never
// delivered again.
func (s RecordState) terminal() bool { return s == Acknowledged || s == Archived }

// AckType is an acknowledgement type of ShareFetch and ShareAcknowledge.
type AckType int8

// The acknowledgement types; Renew exists from ShareFetch and
// ShareAcknowledge v2 (KIP-1222).
const (
	AckGap     AckType = 0
	AckAccept  AckType = 1
	AckRelease AckType = 2
	AckReject  AckType = 3
	AckRenew   AckType = 4
)

// target is the state an acknowledgement moves a record to (Kafka's
// ACK_TYPE_TO_RECORD_STATE); Renew has none.
func (t AckType) target() RecordState {
	switch t {
	case AckAccept:
		return Acknowledged
	case AckRelease:
		return Available
	}
	return Archived
}

// AcquireMode is ShareFetch v2's ShareAcquireMode (KIP-1206).
type AcquireMode int8

// The acquire modes: batch_optimized may return more records than
// MaxRecords to keep whole record batches; record_limit never does.
const (
	BatchOptimized AcquireMode = 0
	RecordLimit    AcquireMode = 1
)

// Config holds the limits of one share partition, under Kafka's names. A
// group config may override each (share.record.lock.duration.ms,
// share.delivery.count.limit, share.partition.max.record.locks), so the
// caller resolves them per group and may change them with SetConfig.
type Config struct {
	// MaxInFlightRecords is group.share.partition.max.record.locks: the
	// in-flight window [SPSO, SPEO] grows by new records only while it
	// holds fewer.
	MaxInFlightRecords int
	// DeliveryCountLimit is group.share.delivery.count.limit: a record
	// delivered that many times is archived instead of made available.
	DeliveryCountLimit int
	// RecordLockDuration is group.share.record.lock.duration.ms.
	RecordLockDuration time.Duration
}

// DefaultConfig returns Kafka 4.4's defaults.
func DefaultConfig() Config {
	return Config{MaxInFlightRecords: 2000, DeliveryCountLimit: 5, RecordLockDuration: 30 * time.Second}
}

// throttleLimit is the delivery count from which Kafka shrinks the
// batches it delivers, to isolate a poison record: half the limit rounded
// up, at least 2.
func (c Config) throttleLimit() int {
	return max(2, (c.DeliveryCountLimit+1)/2)
}

// StateBatch is a range of offsets with one state, as the share
// coordinator stores it (Kafka's PersisterStateBatch).
type StateBatch struct {
	FirstOffset, LastOffset int64
	DeliveryState           RecordState
	DeliveryCount           int16
}

// AcquiredRecords is a range ShareFetch hands to a member.
type AcquiredRecords struct {
	FirstOffset, LastOffset int64
	DeliveryCount           int16
}

// AckBatch is one acknowledgement batch of a ShareFetch or a
// ShareAcknowledge: one type for the range, or one per offset.
type AckBatch struct {
	FirstOffset, LastOffset int64
	AcknowledgeTypes        []int8
}

// UninitializedStartOffset is the start offset of a share partition the
// share coordinator has no state for: share.auto.offset.reset decides.
const UninitializedStartOffset int64 = -1

// PersistedState is what ReadShareGroupState returned for the partition.
type PersistedState struct {
	StateEpoch  int32
	StartOffset int64
	Batches     []StateBatch
}

// Write is a state change the share coordinator must record
// (WriteShareGroupState). The caller sends it and reports the outcome with
// Partition.WriteDone(ID, ...); the records it moved are not acquirable
// and the start offset does not move past them until then.
type Write struct {
	ID                      uint64
	StateEpoch, LeaderEpoch int32
	StartOffset             int64
	DeliveryCompleteCount   int32
	Batches                 []StateBatch
}

// errf returns an error carrying the Kafka error code kerrVal (readable
// with errors.As into *kerr.Error) and a message.
func errf(code *kerr.Error, format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), code)
}

// PersisterError maps the error code of a failed share-state write or read
// to the error the client is answered with (Kafka's
// SharePartition.fetchPersisterError).
func PersisterError(code int16) error {
	e := kerr.ErrorForCode(code)
	switch e {
	case nil:
		return nil
	case kerr.NotCoordinator, kerr.CoordinatorNotAvailable, kerr.CoordinatorLoadInProgress:
		return errf(kerr.CoordinatorNotAvailable, "share state")
	case kerr.GroupIDNotFound, kerr.UnknownTopicOrPartition:
		return errf(e.(*kerr.Error), "share state")
	case kerr.FencedLeaderEpoch, kerr.FencedStateEpoch:
		return errf(kerr.NotLeaderForPartition, "share state")
	}
	return errf(kerr.UnknownServerError, "share state: %v", e)
}
