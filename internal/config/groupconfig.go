package config

// Group configs: the keys of Kafka 4.4's GroupConfig (KIP-848, extended by
// KIP-932, KIP-1071 and KIP-1191), set per group on a GROUP config resource
// (ConfigResource type 32) with IncrementalAlterConfigs or AlterConfigs and
// stored as ConfigRecords in the metadata log. A group without an override
// runs with the broker key the group key names as its synonym, or with the
// group key's own default when it has none (share.auto.offset.reset...).
//
// The table is Kafka 4.4.0's GroupConfig.CONFIG_DEF, in its definition
// order (ConfigDef.parse reports the first bad key in that order), read
// from the pinned release's jar; the docs are Kafka's.

// GroupKeyDef is one group config key.
type GroupKeyDef struct {
	Name string
	Type KeyType
	// Default is ConfigDef's default, used only by keys with no broker
	// synonym (a key with one takes the broker key's value).
	Default string
	// HasMin and Min are ConfigDef's Range.atLeast, checked before the
	// broker's bounds.
	HasMin bool
	Min    int64
	// Internal keys are described only when the group sets them, as Kafka.
	Internal bool
	// Synonym is the broker key supplying the value the group does not set.
	Synonym string
	// Enforced reports whether Sluice acts on the key; the others are
	// accepted, stored and described as Kafka does (streams groups and the
	// dead-letter queue of KIP-1191 are not built, the assignors run inline).
	Enforced bool
	Doc      string
}

// Group config key names (Kafka's GroupConfig constants).
const (
	GroupCfgConsumerSessionTimeoutMs       = "consumer.session.timeout.ms"
	GroupCfgConsumerHeartbeatIntervalMs    = "consumer.heartbeat.interval.ms"
	GroupCfgConsumerAssignmentIntervalMs   = "consumer.assignment.interval.ms"
	GroupCfgConsumerAssignorOffloadEnable  = "consumer.assignor.offload.enable"
	GroupCfgShareSessionTimeoutMs          = "share.session.timeout.ms"
	GroupCfgShareHeartbeatIntervalMs       = "share.heartbeat.interval.ms"
	GroupCfgShareRecordLockDurationMs      = "share.record.lock.duration.ms"
	GroupCfgShareDeliveryCountLimit        = "share.delivery.count.limit"
	GroupCfgSharePartitionMaxRecordLocks   = "share.partition.max.record.locks"
	GroupCfgShareAutoOffsetReset           = "share.auto.offset.reset"
	GroupCfgShareIsolationLevel            = "share.isolation.level"
	GroupCfgShareRenewAcknowledgeEnable    = "share.renew.acknowledge.enable"
	GroupCfgShareAssignmentIntervalMs      = "share.assignment.interval.ms"
	GroupCfgStreamsAssignorName            = "streams.assignor.name"
	GroupCfgStreamsRackAwareAssignmentTags = "streams.rack.aware.assignment.tags"
	GroupCfgErrorsDLQTopicName             = "errors.deadletterqueue.topic.name"
)

func gk(name string, t KeyType, min int64, hasMin bool, synonym, def string) GroupKeyDef {
	return GroupKeyDef{Name: name, Type: t, Min: min, HasMin: hasMin, Synonym: synonym, Default: def}
}

// groupKeys is Kafka 4.4.0's GroupConfig.CONFIG_DEF.
var groupKeys = func() []GroupKeyDef {
	keys := []GroupKeyDef{
		gk(GroupCfgConsumerSessionTimeoutMs, TypeInt, 1, true, "group.consumer.session.timeout.ms", "45000"),
		gk(GroupCfgConsumerHeartbeatIntervalMs, TypeInt, 1, true, "group.consumer.heartbeat.interval.ms", "5000"),
		gk(GroupCfgConsumerAssignmentIntervalMs, TypeInt, 0, true, "group.consumer.assignment.interval.ms", "1000"),
		gk(GroupCfgConsumerAssignorOffloadEnable, TypeBoolean, 0, false, "group.consumer.assignor.offload.enable", "true"),
		gk(GroupCfgShareSessionTimeoutMs, TypeInt, 1, true, "group.share.session.timeout.ms", "45000"),
		gk(GroupCfgShareHeartbeatIntervalMs, TypeInt, 1, true, "group.share.heartbeat.interval.ms", "5000"),
		gk(GroupCfgShareRecordLockDurationMs, TypeInt, 1000, true, "group.share.record.lock.duration.ms", "30000"),
		gk(GroupCfgShareDeliveryCountLimit, TypeInt, 2, true, "group.share.delivery.count.limit", "5"),
		gk(GroupCfgSharePartitionMaxRecordLocks, TypeInt, 100, true, "group.share.partition.max.record.locks", "2000"),
		gk(GroupCfgShareAutoOffsetReset, TypeString, 0, false, "", "latest"),
		gk(GroupCfgShareIsolationLevel, TypeString, 0, false, "", "read_uncommitted"),
		gk(GroupCfgShareRenewAcknowledgeEnable, TypeBoolean, 0, false, "", "true"),
		gk(GroupCfgShareAssignmentIntervalMs, TypeInt, 0, true, "group.share.assignment.interval.ms", "1000"),
		gk("share.assignor.offload.enable", TypeBoolean, 0, false, "group.share.assignor.offload.enable", "true"),
		gk("streams.session.timeout.ms", TypeInt, 1, true, "group.streams.session.timeout.ms", "45000"),
		gk("streams.heartbeat.interval.ms", TypeInt, 1, true, "group.streams.heartbeat.interval.ms", "5000"),
		gk("streams.num.standby.replicas", TypeInt, 0, true, "group.streams.num.standby.replicas", "0"),
		gk("streams.initial.rebalance.delay.ms", TypeInt, 0, true, "group.streams.initial.rebalance.delay.ms", "3000"),
		gk("streams.assignment.interval.ms", TypeInt, 0, true, "group.streams.assignment.interval.ms", "1000"),
		gk("streams.assignor.offload.enable", TypeBoolean, 0, false, "group.streams.assignor.offload.enable", "true"),
		gk("streams.task.offset.interval.ms", TypeInt, 1, true, "group.streams.task.offset.interval.ms", "60000"),
		gk("streams.num.warmup.replicas", TypeInt, 0, true, "group.streams.num.warmup.replicas", "2"),
		gk(GroupCfgStreamsRackAwareAssignmentTags, TypeList, 0, false, "group.streams.rack.aware.assignment.tags", ""),
		gk("streams.acceptable.recovery.lag", TypeLong, 0, true, "group.streams.acceptable.recovery.lag", "10000"),
		gk(GroupCfgStreamsAssignorName, TypeString, 0, false, "group.streams.assignors", ""),
		gk(GroupCfgErrorsDLQTopicName, TypeString, 0, false, "", ""),
		gk("errors.deadletterqueue.copy.record.enable", TypeBoolean, 0, false, "", "false"),
	}
	internal := map[string]bool{
		GroupCfgConsumerAssignorOffloadEnable: true, "share.assignor.offload.enable": true,
		"streams.assignor.offload.enable": true, "streams.task.offset.interval.ms": true,
		"streams.num.warmup.replicas": true, "streams.acceptable.recovery.lag": true,
	}
	// The share group keys await the share group work.
	enforced := map[string]bool{
		GroupCfgConsumerSessionTimeoutMs: true, GroupCfgConsumerHeartbeatIntervalMs: true,
	}
	for i := range keys {
		keys[i].Internal = internal[keys[i].Name]
		keys[i].Enforced = enforced[keys[i].Name]
		keys[i].Doc = groupKeyDocs[keys[i].Name]
	}
	return keys
}()

// GroupKeys returns the group config keys in Kafka's definition order.
func GroupKeys() []GroupKeyDef { return append([]GroupKeyDef(nil), groupKeys...) }

// groupKey returns the definition of a group key.
func groupKey(name string) (GroupKeyDef, bool) {
	for _, k := range groupKeys {
		if k.Name == name {
			return k, true
		}
	}
	return GroupKeyDef{}, false
}

// IsGroupKey reports whether name is a group config key.
func IsGroupKey(name string) bool {
	_, ok := groupKey(name)
	return ok
}

var groupKeyDocs = map[string]string{
	GroupCfgConsumerSessionTimeoutMs:      "The timeout to detect client failures when using the consumer group protocol.",
	GroupCfgConsumerHeartbeatIntervalMs:   "The heartbeat interval given to the members of a consumer group.",
	GroupCfgConsumerAssignmentIntervalMs:  "The interval between assignment updates for a consumer group.",
	GroupCfgConsumerAssignorOffloadEnable: "Whether to offload consumer group assignment to a group coordinator background thread.",
	GroupCfgShareSessionTimeoutMs:         "The timeout to detect client failures when using the share group protocol.",
	GroupCfgShareHeartbeatIntervalMs:      "The heartbeat interval given to the members of a share group.",
	GroupCfgShareRecordLockDurationMs:     "The record acquisition lock duration in milliseconds for share groups.",
	GroupCfgShareDeliveryCountLimit:       "The maximum number of delivery attempts for a record delivered to a share group.",
	GroupCfgSharePartitionMaxRecordLocks:  "Share-group record lock limit per share-partition.",
	GroupCfgShareAutoOffsetReset: "The strategy to initialize the share-partition start offset. <ul><li>earliest: automatically reset the offset to the earliest offset</li>" +
		"<li>latest: automatically reset the offset to the latest offset</li><li>by_duration:&lt;duration&gt;: automatically reset the offset to a configured duration from the current timestamp. " +
		"&lt;duration&gt; must be specified in ISO8601 format (PnDTnHnMn.nS). Negative duration is not allowed.</li><li>anything else: throw exception to the share consumer.</li></ul>",
	GroupCfgShareIsolationLevel: "Controls how to read records written transactionally. If set to \"read_committed\", the share group will only deliver transactional records which have been committed. " +
		"If set to \"read_uncommitted\", the share group will return all messages, even transactional messages which have been aborted. Non-transactional records will be returned unconditionally in either mode.",
	GroupCfgShareRenewAcknowledgeEnable: "Whether the renew acknowledge type is enabled for the share group.",
	GroupCfgShareAssignmentIntervalMs:   "The interval between assignment updates for a share group.",
	"share.assignor.offload.enable":     "Whether to offload share group assignment to a group coordinator background thread.",
	"streams.session.timeout.ms":        "The timeout to detect client failures when using the streams group protocol.",
	"streams.heartbeat.interval.ms":     "The heartbeat interval given to the members.",
	"streams.num.standby.replicas":      "The number of standby replicas for each task.",
	"streams.initial.rebalance.delay.ms": "The amount of time the group coordinator will wait for more streams clients to join a new group before performing the first rebalance. " +
		"A longer delay means potentially fewer rebalances.",
	"streams.assignment.interval.ms":  "The interval between assignment updates for a streams group.",
	"streams.assignor.offload.enable": "Whether to offload streams group assignment to a group coordinator background thread.",
	"streams.task.offset.interval.ms": "The interval in which the warmup task changelog offsets on a client are updated on the broker. " +
		"The offsets are sent with the next heartbeat after this time has passed.",
	"streams.num.warmup.replicas": "The maximum number of warmup task replicas.",
	GroupCfgStreamsRackAwareAssignmentTags: "List of client tag keys used to distribute standby replicas across Kafka Streams instances. " +
		"When configured, and the used broker-side assignor supports it, it will make a best-effort to distribute standby tasks over each client tag dimension.",
	"streams.acceptable.recovery.lag": "The maximum acceptable lag (number of offsets to catch up) for a client to be considered caught-up enough to receive an active task assignment.",
	GroupCfgStreamsAssignorName: "The task assignor to use for this streams group, selected by short name from the assignors registered via the broker configuration group.streams.assignors. " +
		"When unset, the group defaults to the first assignor configured in the broker's group.streams.assignors setting. " +
		"Changing the assignor does not trigger a rebalance for the group; the new assignor takes effect on the next rebalance.",
	GroupCfgErrorsDLQTopicName: "The name of the topic to be used as the dead-letter queue (DLQ) topic for this share group. If blank (the default), the group does not have a DLQ topic.",
	"errors.deadletterqueue.copy.record.enable": "When writing onto the dead-letter queue topic, whether to copy the original record onto the DLQ topic, " +
		"or just write a record containing the context information headers.",
}
