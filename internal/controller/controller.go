// Package controller is the logic of the active controller, kept pure: each
// operation reads the current metadata.Image and returns the records to
// propose plus the response to send once they commit. Nothing here changes
// state; the quorum commits the records and the metadata.Loader replays them
// (apply-on-commit, DESIGN.md "Planes and roles").
//
// Operations must run one at a time, each against the image that already
// holds the records of the previous one: two CreateTopics for one name
// computed on the same image would both emit a TopicRecord, and the second
// would be refused at replay.
package controller

import (
	"hash/fnv"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// ConfigPolicy is what the controller needs to know about configs; the node
// builds it from internal/config, which owns config names, types and defaults.
type ConfigPolicy interface {
	// Validate checks a resource's explicitly set configs after a change
	// (the whole resulting set). An error is reported with the *kerr.Error
	// it wraps, INVALID_CONFIG when it wraps none.
	Validate(res metadata.ConfigResource, configs map[string]string) error
	// IsList reports whether a config is a comma-separated list, the only
	// kind IncrementalAlterConfigs may APPEND to or SUBTRACT from.
	IsList(t metadata.ConfigResourceType, name string) bool
	// Default is the value of a config that is not explicitly set, the base
	// of APPEND and SUBTRACT ("" when it has none).
	Default(t metadata.ConfigResourceType, name string) string
}

// Options configures the controller.
type Options struct {
	// NumPartitions is num.partitions, used when CreateTopics asks for -1.
	NumPartitions int32
	// DefaultReplicationFactor is default.replication.factor, used for -1.
	DefaultReplicationFactor int16
	// Configs validates config changes. Required.
	Configs ConfigPolicy
	// NewTopicID draws topic ids; kafka.RandomUUID when nil.
	NewTopicID func() (kafka.UUID, error)
	// MaxPartitionsPerBroker refuses a CreateTopics or CreatePartitions
	// that would place more partition replicas on one broker (each holds an
	// open file): the node's open file limit less room for connections
	// (commitlog.PartitionsWithinFileLimit), applied to every broker. Zero
	// means no limit.
	MaxPartitionsPerBroker int
}

// Controller computes the records and responses of controller operations.
type Controller struct {
	opts Options
}

// New returns a controller; defaults fill zero Options fields.
func New(opts Options) *Controller {
	if opts.NumPartitions <= 0 {
		opts.NumPartitions = 1
	}
	if opts.DefaultReplicationFactor <= 0 {
		opts.DefaultReplicationFactor = 1
	}
	if opts.NewTopicID == nil {
		opts.NewTopicID = kafka.RandomUUID
	}
	return &Controller{opts: opts}
}

// MetadataTopic is the name of the metadata log, which clients may not create.
const MetadataTopic = "__cluster_metadata"

// MaxRecordsPerOperation bounds the records one request may produce, as
// Kafka's controller does (10000): a request for millions of partitions is
// refused before anything is allocated for it.
const MaxRecordsPerOperation = 10000

// ProducerIDBlockSize is the number of producer ids a broker gets at a time (Kafka's 1000).
const ProducerIDBlockSize = 1000

func errMessage(err *kerr.Error, msg string) (int16, *string) {
	if msg == "" {
		msg = err.Description
	}
	return err.Code, &msg
}

// unfencedBrokers returns the ids of the registered, unfenced brokers, sorted.
func unfencedBrokers(im *metadata.Image) []int32 {
	var out []int32
	for _, id := range im.BrokerIDs() {
		if b, _ := im.Broker(id); !b.Fenced {
			out = append(out, id)
		}
	}
	return out
}

// placementStart spreads the first replica of partition 0 over the brokers
// by topic name, so leaders of many topics do not all land on one broker,
// while the outcome stays a pure function of the request and the image.
func placementStart(topic string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(topic))
	return int(h.Sum32() % uint32(n))
}

// placeReplicas assigns replicas round-robin over the unfenced brokers:
// partition p starts at broker start+p and takes the next rf brokers.
func placeReplicas(brokers []int32, topic string, firstPartition, count int32, rf int16) [][]int32 {
	n := len(brokers)
	start := placementStart(topic, n)
	out := make([][]int32, count)
	for i := range out {
		p := int(firstPartition) + i
		replicas := make([]int32, rf)
		for r := range replicas {
			replicas[r] = brokers[(start+p+r)%n]
		}
		out[i] = replicas
	}
	return out
}
