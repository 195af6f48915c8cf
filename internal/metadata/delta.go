package metadata

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/sluice-io/sluice/internal/kafka"
)

// ErrInconsistentRecord is wrapped by replay errors: a record that does not
// fit the image (a partition of an unknown topic, a duplicate topic...). The
// controller never writes such a record, so one means a bug or corruption.
var ErrInconsistentRecord = errors.New("metadata: record inconsistent with image")

// Delta is the set of changes of replayed records on top of a base image.
// It is not safe for concurrent use; the Image it builds is.
type Delta struct {
	base   *Image
	offset int64
	epoch  int32

	clusterID      *string
	features       map[string]int16
	topics         map[kafka.UUID]*Topic // changed or created
	removedTopics  map[kafka.UUID]*Topic // deleted topics as the base or delta had them
	configs        map[ConfigResource]map[string]*string
	clearedConfigs map[ConfigResource]bool // every key removed before configs' changes
	brokers        map[int32]*Broker       // nil value: unregistered
	nextProducerID *int64
	sec            securityDelta
}

// NewDelta starts an empty delta on base.
func NewDelta(base *Image) *Delta {
	return &Delta{
		base:           base,
		offset:         base.offset,
		epoch:          base.epoch,
		features:       map[string]int16{},
		topics:         map[kafka.UUID]*Topic{},
		removedTopics:  map[kafka.UUID]*Topic{},
		configs:        map[ConfigResource]map[string]*string{},
		clearedConfigs: map[ConfigResource]bool{},
		brokers:        map[int32]*Broker{},
		sec:            newSecurityDelta(),
	}
}

// Base is the image the delta started from.
func (d *Delta) Base() *Image { return d.base }

// Offset is the offset of the last replayed record.
func (d *Delta) Offset() int64 { return d.offset }

// IsEmpty reports whether no record changed anything.
func (d *Delta) IsEmpty() bool {
	return d.clusterID == nil && len(d.features) == 0 && len(d.topics) == 0 && len(d.removedTopics) == 0 &&
		len(d.configs) == 0 && len(d.clearedConfigs) == 0 && len(d.brokers) == 0 && d.nextProducerID == nil && d.sec.isEmpty()
}

// ChangedTopics returns created or changed topics (their new state), by name.
func (d *Delta) ChangedTopics() []*Topic {
	out := slices.Collect(maps.Values(d.topics))
	slices.SortFunc(out, func(a, b *Topic) int { return compareStrings(a.Name, b.Name) })
	return out
}

// RemovedTopics returns deleted topics (their last state), by name.
func (d *Delta) RemovedTopics() []*Topic {
	out := slices.Collect(maps.Values(d.removedTopics))
	slices.SortFunc(out, func(a, b *Topic) int { return compareStrings(a.Name, b.Name) })
	return out
}

// ChangedBrokers returns the ids of registered, changed or unregistered brokers.
func (d *Delta) ChangedBrokers() []int32 { return slices.Sorted(maps.Keys(d.brokers)) }

// ChangedConfigs returns the resources whose configs changed, in order.
func (d *Delta) ChangedConfigs() []ConfigResource {
	set := map[ConfigResource]bool{}
	for r := range d.configs {
		set[r] = true
	}
	for r := range d.clearedConfigs {
		set[r] = true
	}
	return slices.SortedFunc(maps.Keys(set), compareResources)
}

func compareResources(a, b ConfigResource) int {
	if a.Type != b.Type {
		return int(a.Type) - int(b.Type)
	}
	return compareStrings(a.Name, b.Name)
}

// ChangedFeatures returns the changed feature levels (0: removed).
func (d *Delta) ChangedFeatures() map[string]int16 { return maps.Clone(d.features) }

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// topic returns the current state of a topic: delta first, then base.
func (d *Delta) topic(id kafka.UUID) (*Topic, bool) {
	if t, ok := d.topics[id]; ok {
		return t, true
	}
	if _, ok := d.removedTopics[id]; ok {
		return nil, false
	}
	t, ok := d.base.topicsByID[id]
	return t, ok
}

func (d *Delta) topicNameTaken(name string) bool {
	for _, t := range d.topics {
		if t.Name == name {
			return true
		}
	}
	if t, ok := d.base.topicsByName[name]; ok {
		_, removed := d.removedTopics[t.ID]
		return !removed
	}
	return false
}

// mutableTopic returns a delta-owned copy of a topic to change.
func (d *Delta) mutableTopic(id kafka.UUID) (*Topic, bool) {
	if t, ok := d.topics[id]; ok {
		return t, true
	}
	t, ok := d.topic(id)
	if !ok {
		return nil, false
	}
	c := &Topic{Name: t.Name, ID: t.ID, Partitions: maps.Clone(t.Partitions)}
	d.topics[id] = c
	return c, true
}

func (d *Delta) broker(id int32) (*Broker, bool) {
	if b, ok := d.brokers[id]; ok {
		return b, b != nil
	}
	b, ok := d.base.brokers[id]
	return b, ok
}

func (d *Delta) mutableBroker(id int32, epoch int64) (*Broker, error) {
	b, ok := d.broker(id)
	if !ok {
		return nil, fmt.Errorf("%w: broker %d is not registered", ErrInconsistentRecord, id)
	}
	if b.Epoch != epoch {
		return nil, fmt.Errorf("%w: broker %d has epoch %d, record says %d", ErrInconsistentRecord, id, b.Epoch, epoch)
	}
	c := *b
	d.brokers[id] = &c
	return &c, nil
}

// Replay applies one record at a log offset and epoch to the delta. A record
// that does not fit is an error and leaves the delta unchanged.
func (d *Delta) Replay(offset int64, epoch int32, rec Record) error {
	if err := d.replay(rec); err != nil {
		return fmt.Errorf("metadata: replay offset %d type %d: %w", offset, rec.Type(), err)
	}
	d.offset, d.epoch = offset, epoch
	return nil
}

func (d *Delta) replay(rec Record) error {
	switch r := rec.(type) {
	case *ClusterIDRecord:
		id := r.ClusterID
		d.clusterID = &id
	case *FeatureLevelRecord:
		d.features[r.Name] = r.Level
	case *TopicRecord:
		if _, ok := d.topic(r.TopicID); ok {
			return fmt.Errorf("%w: topic id %s exists", ErrInconsistentRecord, r.TopicID)
		}
		if d.topicNameTaken(r.Name) {
			return fmt.Errorf("%w: topic %q exists", ErrInconsistentRecord, r.Name)
		}
		delete(d.removedTopics, r.TopicID)
		d.topics[r.TopicID] = &Topic{Name: r.Name, ID: r.TopicID, Partitions: map[int32]PartitionState{}}
	case *PartitionRecord:
		if r.Partition < 0 {
			return fmt.Errorf("%w: partition %d", ErrInconsistentRecord, r.Partition)
		}
		t, ok := d.mutableTopic(r.TopicID)
		if !ok {
			return fmt.Errorf("%w: partition of unknown topic id %s", ErrInconsistentRecord, r.TopicID)
		}
		if r.Directories != nil && len(r.Directories) != len(r.Replicas) {
			return fmt.Errorf("%w: %d directories for %d replicas", ErrInconsistentRecord, len(r.Directories), len(r.Replicas))
		}
		t.Partitions[r.Partition] = PartitionState{
			Replicas: slices.Clone(r.Replicas), ISR: slices.Clone(r.ISR),
			Leader: r.Leader, LeaderEpoch: r.LeaderEpoch, PartitionEpoch: r.PartitionEpoch,
			RemovingReplicas: nonEmptyClone(r.RemovingReplicas), AddingReplicas: nonEmptyClone(r.AddingReplicas),
			Directories: slices.Clone(r.Directories),
		}
	case *PartitionChangeRecord:
		t, ok := d.topic(r.TopicID)
		if !ok {
			return fmt.Errorf("%w: change of unknown topic id %s", ErrInconsistentRecord, r.TopicID)
		}
		if _, ok := t.Partitions[r.Partition]; !ok {
			return fmt.Errorf("%w: change of unknown partition %s-%d", ErrInconsistentRecord, t.Name, r.Partition)
		}
		t, _ = d.mutableTopic(r.TopicID)
		p := t.Partitions[r.Partition]
		if r.Replicas != nil {
			p.Directories = remapDirs(p.Replicas, p.Directories, r.Replicas)
			p.Replicas = slices.Clone(r.Replicas)
		}
		if r.Directories != nil {
			if len(r.Directories) != len(p.Replicas) {
				return fmt.Errorf("%w: %d directories for %d replicas", ErrInconsistentRecord, len(r.Directories), len(p.Replicas))
			}
			p.Directories = slices.Clone(r.Directories)
		}
		if r.ISR != nil {
			p.ISR = slices.Clone(r.ISR)
		}
		if r.RemovingReplicas != nil {
			p.RemovingReplicas = nonEmptyClone(r.RemovingReplicas)
		}
		if r.AddingReplicas != nil {
			p.AddingReplicas = nonEmptyClone(r.AddingReplicas)
		}
		if r.Leader != NoLeaderChange {
			p.Leader = r.Leader
			p.LeaderEpoch++
		}
		p.PartitionEpoch++
		t.Partitions[r.Partition] = p
	case *RemoveTopicRecord:
		t, ok := d.topic(r.TopicID)
		if !ok {
			return fmt.Errorf("%w: removal of unknown topic id %s", ErrInconsistentRecord, r.TopicID)
		}
		delete(d.topics, r.TopicID)
		if _, inBase := d.base.topicsByID[r.TopicID]; inBase {
			d.removedTopics[r.TopicID] = t
		}
		res := ConfigResource{Type: ConfigResourceTopic, Name: t.Name}
		delete(d.configs, res)
		d.clearedConfigs[res] = true
	case *ConfigRecord:
		res := ConfigResource{Type: r.ResourceType, Name: r.ResourceName}
		if d.configs[res] == nil {
			d.configs[res] = map[string]*string{}
		}
		var v *string
		if r.Value != nil {
			s := *r.Value
			v = &s
		}
		d.configs[res][r.Name] = v
	case *ProducerIDsRecord:
		cur := d.base.nextProducerID
		if d.nextProducerID != nil {
			cur = *d.nextProducerID
		}
		if r.NextProducerID <= cur {
			return fmt.Errorf("%w: next producer id %d not above %d", ErrInconsistentRecord, r.NextProducerID, cur)
		}
		next := r.NextProducerID
		d.nextProducerID = &next
	case *RegisterBrokerRecord:
		d.brokers[r.BrokerID] = &Broker{
			ID: r.BrokerID, IncarnationID: r.IncarnationID, Epoch: r.BrokerEpoch,
			Endpoints: slices.Clone(r.Endpoints), Rack: cloneString(r.Rack), Fenced: r.Fenced,
			LogDirs: sortedDirs(r.LogDirs),
		}
	case *UnregisterBrokerRecord:
		if _, ok := d.broker(r.BrokerID); !ok {
			return fmt.Errorf("%w: unregistering unknown broker %d", ErrInconsistentRecord, r.BrokerID)
		}
		d.brokers[r.BrokerID] = nil
	case *FenceBrokerRecord:
		b, err := d.mutableBroker(r.BrokerID, r.BrokerEpoch)
		if err != nil {
			return err
		}
		b.Fenced = true
	case *UnfenceBrokerRecord:
		b, err := d.mutableBroker(r.BrokerID, r.BrokerEpoch)
		if err != nil {
			return err
		}
		b.Fenced = false
	case *BrokerRegistrationChangeRecord:
		b, err := d.mutableBroker(r.BrokerID, r.BrokerEpoch)
		if err != nil {
			return err
		}
		if r.LogDirs != nil {
			b.LogDirs = sortedDirs(r.LogDirs)
		}
		switch r.Fenced {
		case FenceFenced:
			b.Fenced = true
		case FenceUnfenced:
			b.Fenced = false
		case FenceUnchanged:
		default:
			return fmt.Errorf("%w: fenced value %d", ErrInconsistentRecord, r.Fenced)
		}
	default:
		if handled, err := d.replaySecurity(rec); handled {
			return err
		}
		return fmt.Errorf("%w: %T", ErrUnknownRecordType, rec)
	}
	return nil
}

// nonEmptyClone copies a reassignment list; an empty one becomes nil, so a
// finished reassignment looks the same however it was cleared.
func nonEmptyClone(ids []int32) []int32 {
	if len(ids) == 0 {
		return nil
	}
	return slices.Clone(ids)
}

func cloneString(s *string) *string {
	if s == nil {
		return nil
	}
	c := *s
	return &c
}

// Apply builds the image of base plus the delta. The base is untouched;
// unchanged topics and brokers are shared between the two images.
func (d *Delta) Apply() *Image {
	b := d.base
	im := &Image{
		offset:         d.offset,
		epoch:          d.epoch,
		clusterID:      b.clusterID,
		features:       b.features,
		topicsByName:   b.topicsByName,
		topicsByID:     b.topicsByID,
		configs:        b.configs,
		brokers:        b.brokers,
		nextProducerID: b.nextProducerID,
		sec:            d.sec.apply(b.sec),
	}
	if d.clusterID != nil {
		im.clusterID = *d.clusterID
	}
	if d.nextProducerID != nil {
		im.nextProducerID = *d.nextProducerID
	}
	if len(d.features) > 0 {
		im.features = maps.Clone(b.features)
		for k, v := range d.features {
			if v == 0 {
				delete(im.features, k)
			} else {
				im.features[k] = v
			}
		}
	}
	if len(d.topics) > 0 || len(d.removedTopics) > 0 {
		im.topicsByName = maps.Clone(b.topicsByName)
		im.topicsByID = maps.Clone(b.topicsByID)
		for id, t := range d.removedTopics {
			delete(im.topicsByID, id)
			delete(im.topicsByName, t.Name)
		}
		for id, t := range d.topics {
			im.topicsByID[id] = t
			im.topicsByName[t.Name] = t
		}
	}
	if len(d.configs) > 0 || len(d.clearedConfigs) > 0 {
		im.configs = maps.Clone(b.configs)
		for res := range d.clearedConfigs {
			delete(im.configs, res)
		}
		for res, changes := range d.configs {
			cfg := maps.Clone(im.configs[res])
			if cfg == nil {
				cfg = map[string]string{}
			}
			for k, v := range changes {
				if v == nil {
					delete(cfg, k)
				} else {
					cfg[k] = *v
				}
			}
			if len(cfg) == 0 {
				delete(im.configs, res)
			} else {
				im.configs[res] = cfg
			}
		}
	}
	if len(d.brokers) > 0 {
		im.brokers = maps.Clone(b.brokers)
		for id, br := range d.brokers {
			if br == nil {
				delete(im.brokers, id)
			} else {
				im.brokers[id] = br
			}
		}
	}
	return im
}
