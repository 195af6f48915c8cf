package txn

import "time"

// Config holds the broker settings that shape the transaction coordinator,
// under Kafka's names.
type Config struct {
	// TransactionalIDExpiration is transactional.id.expiration.ms: an id
	// idle that long in Empty, CompleteCommit or CompleteAbort is removed.
	TransactionalIDExpiration time.Duration
	// MaxTimeout is transaction.max.timeout.ms, the largest
	// transaction.timeout.ms InitProducerId accepts.
	MaxTimeout time.Duration
	// AbortTimedOutInterval is
	// transaction.abort.timed.out.transaction.cleanup.interval.ms: how
	// often ongoing transactions past their timeout are aborted.
	AbortTimedOutInterval time.Duration
	// RemoveExpiredInterval is
	// transaction.remove.expired.transaction.cleanup.interval.ms: how often
	// idle ids are looked for.
	RemoveExpiredInterval time.Duration
	// CompletionRetryBackoff is how long a CompleteCommit/CompleteAbort
	// write that failed waits before it is written again (Kafka retries
	// it from its marker send loop).
	CompletionRetryBackoff time.Duration
	// TransactionVersion returns the finalized transaction.version: it
	// decides the log value version and the protocol of aborts the
	// coordinator starts itself (timeouts, fencing). nil is TV2, the level
	// Sluice finalizes.
	TransactionVersion func() TransactionVersion
	// OffsetsPartitionFor maps a group id to its __consumer_offsets
	// partition (the group coordinator's partitionFor), for
	// AddOffsetsToTxn. Required for AddOffsets.
	OffsetsPartitionFor func(groupID string) int32
}

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		TransactionalIDExpiration: 7 * 24 * time.Hour,
		MaxTimeout:                15 * time.Minute,
		AbortTimedOutInterval:     10 * time.Second,
		RemoveExpiredInterval:     time.Hour,
		CompletionRetryBackoff:    100 * time.Millisecond,
	}
}

// serverVersion is the finalized transaction.version.
func (c *Config) serverVersion() TransactionVersion {
	if c.TransactionVersion == nil {
		return TV2
	}
	return c.TransactionVersion()
}

// OffsetsTopic is the topic AddOffsetsToTxn adds a partition of.
const OffsetsTopic = "__consumer_offsets"
