package group

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/sluice-io/sluice/internal/coordinator/group/assignor"
)

// Config holds the broker settings that shape group behaviour, under Kafka's
// names.
type Config struct {
	// MinSessionTimeout and MaxSessionTimeout are group.min.session.timeout.ms
	// and group.max.session.timeout.ms.
	MinSessionTimeout time.Duration
	MaxSessionTimeout time.Duration
	// InitialRebalanceDelay is group.initial.rebalance.delay.ms.
	InitialRebalanceDelay time.Duration
	// MaxSize is group.max.size.
	MaxSize int
	// OffsetsRetention is offsets.retention.minutes.
	OffsetsRetention time.Duration
	// OffsetsRetentionCheckInterval is offsets.retention.check.interval.ms.
	OffsetsRetentionCheckInterval time.Duration
	// MaxMetadataSize is offset.metadata.max.bytes.
	MaxMetadataSize int
	// NewMemberJoinTimeout is how long a member that joined during a
	// rebalance (and never completed one) is kept waiting (Kafka's
	// group.classic.new.member.join.timeout, 5 minutes).
	NewMemberJoinTimeout time.Duration
	// NewMemberID makes a member id from its prefix (the group instance id of
	// a static member, else the client id); nil uses Kafka's form
	// "<prefix>-<random uuid>". Tests make them deterministic.
	NewMemberID func(clientID string) string

	// ConsumerSessionTimeout and ConsumerHeartbeatInterval are
	// group.consumer.session.timeout.ms and
	// group.consumer.heartbeat.interval.ms (KIP-848 groups).
	ConsumerSessionTimeout    time.Duration
	ConsumerHeartbeatInterval time.Duration
	// GroupConfigs returns a group's dynamic configs (the GROUP config
	// resource in the metadata image); nil knows none.
	GroupConfigs func(groupID string) map[string]string
	// ResolveConsumerTimeouts turns a group's dynamic configs into its
	// consumer.session.timeout.ms and consumer.heartbeat.interval.ms (an
	// override within the broker's bounds, else the two fields above).
	// Nil ignores the group's configs.
	ResolveConsumerTimeouts func(groupConfigs map[string]string) (session, heartbeat time.Duration)
	// ConsumerMaxSize is group.consumer.max.size.
	ConsumerMaxSize int
	// ConsumerAssignors is group.consumer.assignors; the first is the
	// default.
	ConsumerAssignors []assignor.Assignor
	// ConsumerMigrationPolicy is group.consumer.migration.policy:
	// "disabled", "upgrade", "downgrade" or "bidirectional".
	ConsumerMigrationPolicy string
	// Topics returns the cluster's topics; nil knows none.
	Topics func() Topics
	// Share holds the group.share.* settings (share groups, KIP-932).
	Share ShareConfig
	// MaxRecordBytes bounds one consumer-group record (a member's
	// subscription); 0 is 512 KiB, well inside the offsets partition's
	// message.max.bytes and the coordinator's batch.
	MaxRecordBytes int
}

// consumerTimeouts are a consumer group's session timeout and heartbeat
// interval: its dynamic configs' when it has any, as Kafka's
// GroupMetadataManager reads them on every heartbeat, else the broker's.
func (c *Config) consumerTimeouts(groupID string) (session, heartbeat time.Duration) {
	if c.GroupConfigs != nil && c.ResolveConsumerTimeouts != nil {
		if o := c.GroupConfigs(groupID); len(o) > 0 {
			return c.ResolveConsumerTimeouts(o)
		}
	}
	return c.ConsumerSessionTimeout, c.ConsumerHeartbeatInterval
}

func (c *Config) maxRecordBytes() int {
	if c.MaxRecordBytes <= 0 {
		return 512 << 10
	}
	return c.MaxRecordBytes
}

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		MinSessionTimeout:             6 * time.Second,
		MaxSessionTimeout:             30 * time.Minute,
		InitialRebalanceDelay:         3 * time.Second,
		MaxSize:                       1<<31 - 1,
		OffsetsRetention:              7 * 24 * time.Hour,
		OffsetsRetentionCheckInterval: 10 * time.Minute,
		MaxMetadataSize:               4096,
		NewMemberJoinTimeout:          5 * time.Minute,
		ConsumerSessionTimeout:        45 * time.Second,
		ConsumerHeartbeatInterval:     5 * time.Second,
		ConsumerMaxSize:               1<<31 - 1,
		ConsumerAssignors:             []assignor.Assignor{assignor.Uniform(), assignor.Range()},
		ConsumerMigrationPolicy:       "bidirectional",
	}
}

// memberID makes a new member id: Kafka prefixes it with the group instance
// id for a static member and with the client id otherwise.
func (c *Config) memberID(clientID string, instanceID *string) string {
	prefix := clientID
	if instanceID != nil {
		prefix = *instanceID
	}
	if c.NewMemberID != nil {
		return c.NewMemberID(prefix)
	}
	var u [16]byte
	_, _ = rand.Read(u[:]) // crypto/rand.Read never fails (Go 1.24+)
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	h := hex.EncodeToString(u[:])
	return prefix + "-" + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// defaultAssignor is the first of ConsumerAssignors (uniform when none).
func (c *Config) defaultAssignor() assignor.Assignor {
	if len(c.ConsumerAssignors) == 0 {
		return assignor.Uniform()
	}
	return c.ConsumerAssignors[0]
}

// assignor returns the configured assignor of that name.
func (c *Config) assignor(name string) (assignor.Assignor, bool) {
	for _, a := range c.ConsumerAssignors {
		if a.Name() == name {
			return a, true
		}
	}
	return nil, false
}

// AssignorNames returns the names of the configured assignors.
func (c *Config) AssignorNames() []string {
	out := make([]string, len(c.ConsumerAssignors))
	for i, a := range c.ConsumerAssignors {
		out[i] = a.Name()
	}
	return out
}

// consumerMemberID makes the id of a classic member joining a consumer
// group: a UUID as Kafka's (NewMemberID in tests).
func (c *Config) consumerMemberID() string {
	if c.NewMemberID != nil {
		return c.NewMemberID("")
	}
	return newUUIDString()
}
