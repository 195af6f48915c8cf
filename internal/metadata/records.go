// Package metadata holds the cluster metadata of Sluice as Kafka's KRaft mode
// does: a log of records (topics, partitions, configs, brokers, producer-id
// blocks, features, SCRAM credentials, ACLs, client quotas) replayed into
// an immutable Image. Records use Sluice's own
// versioned binary encoding, documented in docs/metadata-records.md.
//
// The package is pure: it imports nothing of ours above kafka, and nothing
// here does I/O. The quorum package stores and replicates the encoded bytes;
// the Loader turns committed bytes into published Images.
package metadata

import (
	"fmt"

	"github.com/sluice-io/sluice/internal/kafka"
)

// RecordType identifies a record's schema. The numbers follow Kafka's
// metadata record api keys where Kafka has the same record, so operators who
// know one know the other; ClusterIDRecord is Sluice's own.
type RecordType int16

// Record types.
const (
	TypeRegisterBroker           RecordType = 0
	TypeUnregisterBroker         RecordType = 1
	TypeTopic                    RecordType = 2
	TypePartition                RecordType = 3
	TypeConfig                   RecordType = 4
	TypePartitionChange          RecordType = 5
	TypeFenceBroker              RecordType = 7
	TypeUnfenceBroker            RecordType = 8
	TypeRemoveTopic              RecordType = 9
	TypeFeatureLevel             RecordType = 12
	TypeProducerIDs              RecordType = 15
	TypeBrokerRegistrationChange RecordType = 17
	TypeClusterID                RecordType = 64
)

// Record is one metadata record. Each concrete type encodes its current
// version; decoding accepts that version and any older one.
type Record interface {
	Type() RecordType
	// Version is the schema version this build writes.
	Version() int16
	encode(w *writer)
}

// ConfigResourceType is Kafka's ConfigResource.Type code.
type ConfigResourceType int8

// Config resource types (Kafka's codes).
const (
	ConfigResourceTopic  ConfigResourceType = 2
	ConfigResourceBroker ConfigResourceType = 4
	// ConfigResourceGroup is a group's dynamic configs (KIP-848's GROUP
	// resource); the group need not exist.
	ConfigResourceGroup ConfigResourceType = 32
)

func (t ConfigResourceType) String() string {
	switch t {
	case ConfigResourceTopic:
		return "TOPIC"
	case ConfigResourceBroker:
		return "BROKER"
	case ConfigResourceGroup:
		return "GROUP"
	default:
		return fmt.Sprintf("RESOURCE(%d)", int8(t))
	}
}

// Sentinels of partition records, as Kafka's.
const (
	// NoLeader is a partition without a leader.
	NoLeader int32 = -1
	// NoLeaderChange in a PartitionChangeRecord leaves the leader as it is.
	NoLeaderChange int32 = -2
)

// TopicRecord creates a topic.
type TopicRecord struct {
	Name    string
	TopicID kafka.UUID
}

// PartitionRecord creates a partition (or replaces it wholesale). While a
// reassignment is in progress (KIP-455) Replicas is the union of the old and
// the target assignment; RemovingReplicas are the old replicas that leave
// and AddingReplicas the new ones that join once in sync (version 1).
type PartitionRecord struct {
	TopicID          kafka.UUID
	Partition        int32
	Replicas         []int32
	ISR              []int32
	Leader           int32
	LeaderEpoch      int32
	PartitionEpoch   int32
	RemovingReplicas []int32
	AddingReplicas   []int32
	// Directories are the log dir ids of Replicas, one each in the same
	// order (KIP-858, version 2); nil when directory assignment is off.
	Directories []kafka.UUID
}

// PartitionChangeRecord changes a partition. Nil slices and NoLeaderChange
// leave the field as it is; an empty, non-nil RemovingReplicas or
// AddingReplicas clears it (a reassignment ends). Replaying it bumps the
// partition epoch, and the leader epoch when the leader field is set (as
// Kafka's replay does). The reassignment fields are version 1.
type PartitionChangeRecord struct {
	TopicID          kafka.UUID
	Partition        int32
	Leader           int32
	ISR              []int32
	Replicas         []int32
	RemovingReplicas []int32
	AddingReplicas   []int32
	// Directories are the dirs of the replicas (new Replicas, else the
	// current ones), one each (version 2). Nil keeps them, remapped by
	// broker id when Replicas change (a new replica's is DirUnassigned).
	Directories []kafka.UUID
}

// RemoveTopicRecord deletes a topic, its partitions and its configs.
type RemoveTopicRecord struct {
	TopicID kafka.UUID
}

// ConfigRecord sets (Value non-nil) or deletes (Value nil) one config key of
// a resource. An empty BROKER name is the cluster-wide default.
type ConfigRecord struct {
	ResourceType ConfigResourceType
	ResourceName string
	Name         string
	Value        *string
}

// ProducerIDsRecord allocates a block of producer ids to a broker:
// NextProducerID is the first id of the next block, the end of this one.
type ProducerIDsRecord struct {
	BrokerID       int32
	BrokerEpoch    int64
	NextProducerID int64
}

// Endpoint is one listener of a broker.
type Endpoint struct {
	Name             string
	Host             string
	Port             int32
	SecurityProtocol int16
}

// RegisterBrokerRecord registers (or re-registers) a broker.
type RegisterBrokerRecord struct {
	BrokerID      int32
	IncarnationID kafka.UUID
	BrokerEpoch   int64
	Endpoints     []Endpoint
	Rack          *string
	Fenced        bool
	// LogDirs are the ids of the broker's online log dirs (KIP-858,
	// version 1); nil when directory assignment is off.
	LogDirs []kafka.UUID
}

// UnregisterBrokerRecord removes a broker registration.
type UnregisterBrokerRecord struct {
	BrokerID    int32
	BrokerEpoch int64
}

// FenceBrokerRecord fences a broker (it may not lead partitions).
type FenceBrokerRecord struct {
	BrokerID    int32
	BrokerEpoch int64
}

// UnfenceBrokerRecord unfences a broker.
type UnfenceBrokerRecord struct {
	BrokerID    int32
	BrokerEpoch int64
}

// Fencing change values of BrokerRegistrationChangeRecord, as Kafka's.
const (
	FenceUnchanged int8 = 0
	FenceFenced    int8 = 1
	FenceUnfenced  int8 = -1
)

// BrokerRegistrationChangeRecord changes a registered broker's state.
type BrokerRegistrationChangeRecord struct {
	BrokerID    int32
	BrokerEpoch int64
	Fenced      int8
	// LogDirs, when non-nil, replace the broker's online log dirs
	// (version 1): Kafka writes it when a heartbeat reports a dir offline.
	LogDirs []kafka.UUID
}

// FeatureLevelRecord sets a feature's finalized level (metadata.version...).
// Level 0 removes the feature.
type FeatureLevelRecord struct {
	Name  string
	Level int16
}

// ClusterIDRecord carries the cluster id; it is part of the bootstrap records.
type ClusterIDRecord struct {
	ClusterID string
}

// MetadataVersionFeature is the feature name of the metadata version.
const MetadataVersionFeature = "metadata.version"

// BootstrapRecords are the first records of a new cluster's log.
func BootstrapRecords(clusterID string, metadataVersion int16) []Record {
	return []Record{
		&ClusterIDRecord{ClusterID: clusterID},
		&FeatureLevelRecord{Name: MetadataVersionFeature, Level: metadataVersion},
	}
}

func (*TopicRecord) Type() RecordType                    { return TypeTopic }
func (*PartitionRecord) Type() RecordType                { return TypePartition }
func (*PartitionChangeRecord) Type() RecordType          { return TypePartitionChange }
func (*RemoveTopicRecord) Type() RecordType              { return TypeRemoveTopic }
func (*ConfigRecord) Type() RecordType                   { return TypeConfig }
func (*ProducerIDsRecord) Type() RecordType              { return TypeProducerIDs }
func (*RegisterBrokerRecord) Type() RecordType           { return TypeRegisterBroker }
func (*UnregisterBrokerRecord) Type() RecordType         { return TypeUnregisterBroker }
func (*FenceBrokerRecord) Type() RecordType              { return TypeFenceBroker }
func (*UnfenceBrokerRecord) Type() RecordType            { return TypeUnfenceBroker }
func (*BrokerRegistrationChangeRecord) Type() RecordType { return TypeBrokerRegistrationChange }
func (*FeatureLevelRecord) Type() RecordType             { return TypeFeatureLevel }
func (*ClusterIDRecord) Type() RecordType                { return TypeClusterID }

func (*TopicRecord) Version() int16                    { return 0 }
func (*PartitionRecord) Version() int16                { return 2 }
func (*PartitionChangeRecord) Version() int16          { return 2 }
func (*RemoveTopicRecord) Version() int16              { return 0 }
func (*ConfigRecord) Version() int16                   { return 0 }
func (*ProducerIDsRecord) Version() int16              { return 0 }
func (*RegisterBrokerRecord) Version() int16           { return 1 }
func (*UnregisterBrokerRecord) Version() int16         { return 0 }
func (*FenceBrokerRecord) Version() int16              { return 0 }
func (*UnfenceBrokerRecord) Version() int16            { return 0 }
func (*BrokerRegistrationChangeRecord) Version() int16 { return 1 }
func (*FeatureLevelRecord) Version() int16             { return 0 }
func (*ClusterIDRecord) Version() int16                { return 0 }
