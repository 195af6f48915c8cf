package metadata

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sluice-io/sluice/internal/kafka"
)

// PartitionState is one partition as the metadata log describes it.
// During a reassignment Replicas holds the old and the target replicas;
// AddingReplicas join and RemovingReplicas leave when it completes.
type PartitionState struct {
	Replicas         []int32
	ISR              []int32
	Leader           int32
	LeaderEpoch      int32
	PartitionEpoch   int32
	RemovingReplicas []int32
	AddingReplicas   []int32
	// Directories are the log dir ids of Replicas, in their order (KIP-858).
	// Invariant: nil, or exactly len(Replicas) long.
	Directories []kafka.UUID
}

// Reassigning reports whether a reassignment of the partition is in progress.
func (s PartitionState) Reassigning() bool {
	return len(s.AddingReplicas) > 0 || len(s.RemovingReplicas) > 0
}

// Topic is one topic of an Image. Images share Topics between versions, so
// a Topic and its maps and slices are read-only once published.
type Topic struct {
	Name       string
	ID         kafka.UUID
	Partitions map[int32]PartitionState
}

// PartitionIDs returns the topic's partition numbers in order.
func (t *Topic) PartitionIDs() []int32 { return slices.Sorted(maps.Keys(t.Partitions)) }

// ConfigResource names a resource that has configs.
type ConfigResource struct {
	Type ConfigResourceType
	Name string
}

// Broker is a registered broker. Read-only once published.
type Broker struct {
	ID            int32
	IncarnationID kafka.UUID
	Epoch         int64
	Endpoints     []Endpoint
	Rack          *string
	Fenced        bool
	// LogDirs are the ids of the broker's online log dirs, sorted (nil when
	// it registered none).
	LogDirs []kafka.UUID
}

// Image is the cluster metadata after replaying the log up to Offset. It is
// immutable: a new Image is built by applying a Delta, and readers share the
// published one without locks.
type Image struct {
	offset         int64
	epoch          int32
	clusterID      string
	features       map[string]int16
	topicsByName   map[string]*Topic
	topicsByID     map[kafka.UUID]*Topic
	configs        map[ConfigResource]map[string]string
	brokers        map[int32]*Broker
	nextProducerID int64
	sec            securityState
}

// EmptyImage is the image before any record: offset -1.
func EmptyImage() *Image {
	return &Image{
		offset:       -1,
		epoch:        -1,
		features:     map[string]int16{},
		topicsByName: map[string]*Topic{},
		topicsByID:   map[kafka.UUID]*Topic{},
		configs:      map[ConfigResource]map[string]string{},
		brokers:      map[int32]*Broker{},
		sec:          emptySecurityState(),
	}
}

// Offset is the offset of the last record of the metadata log the image reflects (-1: none).
func (im *Image) Offset() int64 { return im.offset }

// Epoch is the leader epoch (raft term) of that record.
func (im *Image) Epoch() int32 { return im.epoch }

// ClusterID is the cluster id from the bootstrap records.
func (im *Image) ClusterID() string { return im.clusterID }

// FeatureLevel returns a finalized feature level (0 when unset).
func (im *Image) FeatureLevel(name string) int16 { return im.features[name] }

// Features returns a copy of the finalized feature levels.
func (im *Image) Features() map[string]int16 { return maps.Clone(im.features) }

// Topic looks a topic up by name.
func (im *Image) Topic(name string) (*Topic, bool) {
	t, ok := im.topicsByName[name]
	return t, ok
}

// TopicByID looks a topic up by id.
func (im *Image) TopicByID(id kafka.UUID) (*Topic, bool) {
	t, ok := im.topicsByID[id]
	return t, ok
}

// TopicNames returns the topic names in order.
func (im *Image) TopicNames() []string { return slices.Sorted(maps.Keys(im.topicsByName)) }

// Partition looks a partition up by topic name and number.
func (im *Image) Partition(tp kafka.TopicPartition) (PartitionState, bool) {
	t, ok := im.topicsByName[tp.Topic]
	if !ok {
		return PartitionState{}, false
	}
	p, ok := t.Partitions[tp.Partition]
	return p, ok
}

// Configs returns a copy of a resource's explicitly set configs.
func (im *Image) Configs(res ConfigResource) map[string]string {
	return maps.Clone(im.configs[res])
}

// Config returns one explicitly set config value.
func (im *Image) Config(res ConfigResource, name string) (string, bool) {
	v, ok := im.configs[res][name]
	return v, ok
}

// Broker looks a registered broker up.
func (im *Image) Broker(id int32) (*Broker, bool) {
	b, ok := im.brokers[id]
	return b, ok
}

// BrokerIDs returns the registered broker ids in order.
func (im *Image) BrokerIDs() []int32 { return slices.Sorted(maps.Keys(im.brokers)) }

// NextProducerID is the first producer id of the next block to allocate.
func (im *Image) NextProducerID() int64 { return im.nextProducerID }

// String prints the whole image deterministically (golden tests, debugging).
func (im *Image) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "offset=%d epoch=%d cluster=%q next-producer-id=%d\n", im.offset, im.epoch, im.clusterID, im.nextProducerID)
	for _, name := range slices.Sorted(maps.Keys(im.features)) {
		fmt.Fprintf(&b, "feature %s=%d\n", name, im.features[name])
	}
	for _, id := range im.BrokerIDs() {
		br := im.brokers[id]
		rack := "<none>"
		if br.Rack != nil {
			rack = *br.Rack
		}
		fmt.Fprintf(&b, "broker %d epoch=%d incarnation=%s fenced=%t rack=%s", br.ID, br.Epoch, br.IncarnationID, br.Fenced, rack)
		for _, e := range br.Endpoints {
			fmt.Fprintf(&b, " %s://%s:%d/%d", e.Name, e.Host, e.Port, e.SecurityProtocol)
		}
		if br.LogDirs != nil {
			fmt.Fprintf(&b, " log-dirs=%s", dirsString(br.LogDirs))
		}
		b.WriteByte('\n')
	}
	for _, name := range im.TopicNames() {
		t := im.topicsByName[name]
		fmt.Fprintf(&b, "topic %s id=%s\n", t.Name, t.ID)
		for _, p := range t.PartitionIDs() {
			ps := t.Partitions[p]
			fmt.Fprintf(&b, "  partition %d replicas=%v isr=%v leader=%d leader-epoch=%d partition-epoch=%d",
				p, ps.Replicas, ps.ISR, ps.Leader, ps.LeaderEpoch, ps.PartitionEpoch)
			if ps.Reassigning() {
				fmt.Fprintf(&b, " adding=%v removing=%v", ps.AddingReplicas, ps.RemovingReplicas)
			}
			if ps.Directories != nil {
				fmt.Fprintf(&b, " dirs=%s", dirsString(ps.Directories))
			}
			b.WriteByte('\n')
		}
	}
	for _, res := range slices.SortedFunc(maps.Keys(im.configs), compareResources) {
		cfg := im.configs[res]
		for _, k := range slices.Sorted(maps.Keys(cfg)) {
			fmt.Fprintf(&b, "config %s %q %s=%s\n", res.Type, res.Name, k, cfg[k])
		}
	}
	im.writeSecurity(&b)
	return b.String()
}
