package controller

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// maxTopicNameLength is Kafka's limit: 255 minus room for a partition
// directory suffix and a deletion marker.
const maxTopicNameLength = 249

// validateTopicName applies Kafka's rules for topic names, with Kafka's
// messages (clients and tools show them to users).
func validateTopicName(name string) error {
	var reason string
	switch {
	case name == "":
		reason = "the empty string is not allowed"
	case name == "." || name == "..":
		reason = fmt.Sprintf("'%s' is not allowed", name)
	case len(name) > maxTopicNameLength:
		reason = fmt.Sprintf("the length of '%s' is longer than the max allowed length %d", name, maxTopicNameLength)
	default:
		for _, c := range []byte(name) {
			legal := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
			if !legal {
				reason = fmt.Sprintf("'%s' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'", name)
				break
			}
		}
	}
	if reason == "" {
		return nil
	}
	return errors.New("Topic name is invalid: " + reason)
}

// collisionKey maps names that Kafka's metric names cannot tell apart
// ('.' and '_' are the same there) to one key.
func collisionKey(name string) string { return strings.ReplaceAll(name, ".", "_") }

// CreateTopics computes the records and response of a CreateTopics request.
// With validate_only the response is the same and there are no records.
func (c *Controller) CreateTopics(im *metadata.Image, req *kmsg.CreateTopicsRequest) ([]metadata.Record, *kmsg.CreateTopicsResponse) {
	resp := kmsg.NewPtrCreateTopicsResponse()
	resp.Version = req.Version
	counts := map[string]int{}
	for _, t := range req.Topics {
		counts[t.Topic]++
	}
	collisions := map[string]string{}
	for _, name := range im.TopicNames() {
		collisions[collisionKey(name)] = name
	}
	if tooManyPartitions(req, c.opts.NumPartitions) {
		for _, t := range req.Topics {
			rt := kmsg.NewCreateTopicsResponseTopic()
			rt.Topic, rt.NumPartitions, rt.ReplicationFactor = t.Topic, -1, -1
			rt.ErrorCode, rt.ErrorMessage = errMessage(kerr.PolicyViolation, "Excessively large number of partitions per request.")
			resp.Topics = append(resp.Topics, rt)
		}
		return nil, resp
	}
	var records []metadata.Record
	total := 0 // records of the accepted topics, counted with validate_only too
	limit := c.partitionLimit(im)
	for _, t := range req.Topics {
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic = t.Topic
		rt.NumPartitions, rt.ReplicationFactor = -1, -1
		var recs []metadata.Record
		if counts[t.Topic] > 1 {
			rt.ErrorCode, rt.ErrorMessage = errMessage(kerr.InvalidRequest, "duplicate topic name "+t.Topic+" in the request")
		} else {
			recs = c.createTopic(im, t, collisions, &rt)
		}
		if rt.ErrorCode == 0 && total+len(recs) > MaxRecordsPerOperation {
			rt.ErrorCode, rt.ErrorMessage = errMessage(kerr.PolicyViolation, fmt.Sprintf("the request would create more than %d metadata records", MaxRecordsPerOperation))
			rt.TopicID, rt.NumPartitions, rt.ReplicationFactor = [16]byte{}, -1, -1
		}
		if rt.ErrorCode == 0 {
			if msg, ok := limit.admit(recs); !ok {
				rt.ErrorCode, rt.ErrorMessage = errMessage(kerr.PolicyViolation, msg)
				rt.TopicID, rt.NumPartitions, rt.ReplicationFactor = [16]byte{}, -1, -1
			}
		}
		resp.Topics = append(resp.Topics, rt)
		if rt.ErrorCode == 0 {
			total += len(recs)
			collisions[collisionKey(t.Topic)] = t.Topic
			if !req.ValidateOnly {
				records = append(records, recs...)
			}
		}
	}
	return records, resp
}

// maxPartitionsPerRequest is Kafka's bound on the partitions one
// CreateTopics request may ask for, over all its topics.
const maxPartitionsPerRequest = 10000

// tooManyPartitions is Kafka's check of the request as a whole, made before
// any topic is looked at: over the bound, every topic fails with
// POLICY_VIOLATION (kafka-topics --partitions 1000000 shows its text).
func tooManyPartitions(req *kmsg.CreateTopicsRequest, defaultPartitions int32) bool {
	var total int64
	for _, t := range req.Topics {
		switch {
		case len(t.ReplicaAssignment) > 0:
			total += int64(len(t.ReplicaAssignment))
		case t.NumPartitions == -1:
			total += int64(defaultPartitions)
		case t.NumPartitions > 0:
			total += int64(t.NumPartitions)
		}
		if total > maxPartitionsPerRequest {
			return true
		}
	}
	return false
}

func (c *Controller) createTopic(im *metadata.Image, t kmsg.CreateTopicsRequestTopic, collisions map[string]string, rt *kmsg.CreateTopicsResponseTopic) []metadata.Record {
	fail := func(err *kerr.Error, msg string) []metadata.Record {
		rt.ErrorCode, rt.ErrorMessage = errMessage(err, msg)
		return nil
	}
	if err := validateTopicName(t.Topic); err != nil {
		return fail(kerr.InvalidTopicException, err.Error())
	}
	if t.Topic == MetadataTopic {
		return fail(kerr.InvalidRequest, "creation of internal topic "+MetadataTopic+" is prohibited")
	}
	if _, ok := im.Topic(t.Topic); ok {
		return fail(kerr.TopicAlreadyExists, fmt.Sprintf("Topic '%s' already exists.", t.Topic))
	}
	if other, ok := collisions[collisionKey(t.Topic)]; ok {
		return fail(kerr.InvalidTopicException, fmt.Sprintf("topic '%s' collides with existing topic: %s", t.Topic, other))
	}
	configs := map[string]string{}
	for _, cfg := range t.Configs {
		if cfg.Value == nil {
			return fail(kerr.InvalidConfig, "null value not supported for topic config "+cfg.Name)
		}
		configs[cfg.Name] = *cfg.Value
	}
	if err := c.opts.Configs.Validate(metadata.ConfigResource{Type: metadata.ConfigResourceTopic, Name: t.Topic}, configs); err != nil {
		return fail(kerr.InvalidConfig, err.Error())
	}
	var assignment [][]int32
	if len(t.ReplicaAssignment) > 0 {
		if t.NumPartitions != -1 || t.ReplicationFactor != -1 {
			return fail(kerr.InvalidRequest, "both numPartitions or replicationFactor and replicasAssignments were set, both cannot be used at the same time")
		}
		var err error
		if assignment, err = manualAssignment(im, t.ReplicaAssignment); err != nil {
			return fail(kerr.InvalidReplicaAssignment, err.Error())
		}
	} else {
		partitions, rf := t.NumPartitions, t.ReplicationFactor
		if partitions == -1 {
			partitions = c.opts.NumPartitions
		}
		if rf == -1 {
			rf = c.opts.DefaultReplicationFactor
		}
		if partitions <= 0 {
			return fail(kerr.InvalidPartitions, "number of partitions was set to an invalid non-positive value")
		}
		// More than the request's bound never gets here (tooManyPartitions);
		// exactly 10,000 fails with the topic's record as one too many
		// (POLICY_VIOLATION, as Kafka 4.4.0 answers).
		if rf <= 0 {
			return fail(kerr.InvalidReplicationFactor, "replication factor must be larger than 0, or -1 to use the default value")
		}
		brokers := rackAlternated(im, unfencedBrokers(im))
		if int(rf) > len(brokers) {
			return fail(kerr.InvalidReplicationFactor, fmt.Sprintf(
				"unable to replicate the partition %d time(s): the target replication factor of %d cannot be reached because only %d broker(s) are registered", rf, rf, len(brokers)))
		}
		assignment = placeReplicas(brokers, t.Topic, 0, partitions, rf)
	}
	id, err := c.opts.NewTopicID()
	if err != nil {
		return fail(kerr.UnknownServerError, err.Error())
	}
	for {
		if _, taken := im.TopicByID(id); !taken {
			break
		}
		if id, err = c.opts.NewTopicID(); err != nil {
			return fail(kerr.UnknownServerError, err.Error())
		}
	}
	recs := []metadata.Record{&metadata.TopicRecord{Name: t.Topic, TopicID: id}}
	for p, replicas := range assignment {
		recs = append(recs, newPartitionRecord(im, id, int32(p), replicas))
	}
	for _, k := range sortedKeys(configs) {
		v := configs[k]
		recs = append(recs, &metadata.ConfigRecord{ResourceType: metadata.ConfigResourceTopic, ResourceName: t.Topic, Name: k, Value: &v})
	}
	rt.TopicID = id
	rt.NumPartitions = int32(len(assignment))
	rt.ReplicationFactor = int16(len(assignment[0]))
	return recs
}

// newPartitionRecord starts a partition with the unfenced replicas in its ISR
// and the first of them as leader, at epoch 0.
func newPartitionRecord(im *metadata.Image, id kafka.UUID, p int32, replicas []int32) *metadata.PartitionRecord {
	var isr []int32
	for _, r := range replicas {
		if b, ok := im.Broker(r); ok && !b.Fenced {
			isr = append(isr, r)
		}
	}
	leader := metadata.NoLeader
	if len(isr) > 0 {
		leader = isr[0]
	}
	return &metadata.PartitionRecord{TopicID: id, Partition: p, Replicas: slices.Clone(replicas), ISR: isr, Leader: leader}
}

// checkReplicas validates one partition's explicit replica list.
func checkReplicas(im *metadata.Image, p int32, replicas []int32, wantRF int) error {
	if len(replicas) == 0 {
		return fmt.Errorf("the manual partition assignment includes an empty replica list for partition %d", p)
	}
	if wantRF > 0 && len(replicas) != wantRF {
		return fmt.Errorf("the manual partition assignment includes a partition with %d replica(s), but this is not consistent with previous partitions, which have %d replica(s)", len(replicas), wantRF)
	}
	seen := map[int32]bool{}
	unfenced := 0
	for _, r := range replicas {
		if seen[r] {
			return fmt.Errorf("the manual partition assignment includes the broker %d more than once", r)
		}
		seen[r] = true
		b, ok := im.Broker(r)
		if !ok {
			return fmt.Errorf("the manual partition assignment includes broker %d, but no such broker is registered", r)
		}
		if !b.Fenced {
			unfenced++
		}
	}
	if unfenced == 0 {
		return fmt.Errorf("all brokers specified in the manual partition assignment for partition %d are fenced or in controlled shutdown", p)
	}
	return nil
}

func manualAssignment(im *metadata.Image, in []kmsg.CreateTopicsRequestTopicReplicaAssignment) ([][]int32, error) {
	out := make([][]int32, len(in))
	for _, a := range in {
		if a.Partition < 0 || int(a.Partition) >= len(in) || out[a.Partition] != nil {
			return nil, fmt.Errorf("partitions should be a consecutive 0-based integer sequence; partition %d is out of place", a.Partition)
		}
		if err := checkReplicas(im, a.Partition, a.Replicas, len(in[0].Replicas)); err != nil {
			return nil, err
		}
		out[a.Partition] = a.Replicas
	}
	return out, nil
}

// DeleteTopics computes the records and response of a DeleteTopics request,
// by name (v0-5 TopicNames, v6 Topics with a name) or by id (v6).
func (c *Controller) DeleteTopics(im *metadata.Image, req *kmsg.DeleteTopicsRequest) ([]metadata.Record, *kmsg.DeleteTopicsResponse) {
	resp := kmsg.NewPtrDeleteTopicsResponse()
	resp.Version = req.Version
	type target struct {
		name *string
		id   kafka.UUID
	}
	var targets []target
	for _, n := range req.TopicNames {
		targets = append(targets, target{name: &n})
	}
	for _, t := range req.Topics {
		targets = append(targets, target{name: t.Topic, id: t.TopicID})
	}
	names, ids := map[string]int{}, map[kafka.UUID]int{}
	for _, t := range targets {
		if t.name != nil && *t.name != "" {
			names[*t.name]++
		} else {
			ids[t.id]++
		}
	}
	var records []metadata.Record
	deleted := map[kafka.UUID]bool{}
	for _, t := range targets {
		rt := kmsg.NewDeleteTopicsResponseTopic()
		rt.Topic, rt.TopicID = t.name, t.id
		var topic *metadata.Topic
		var ok bool
		if t.name != nil && *t.name != "" {
			if names[*t.name] > 1 {
				rt.ErrorCode, rt.ErrorMessage = errMessage(kerr.InvalidRequest, "duplicate topic name "+*t.name)
			} else if topic, ok = im.Topic(*t.name); !ok {
				rt.ErrorCode, rt.ErrorMessage = errMessage(kerr.UnknownTopicOrPartition, "")
			}
		} else {
			if ids[t.id] > 1 {
				rt.ErrorCode, rt.ErrorMessage = errMessage(kerr.InvalidRequest, "duplicate topic id "+t.id.String())
			} else if topic, ok = im.TopicByID(t.id); !ok {
				rt.ErrorCode, rt.ErrorMessage = errMessage(kerr.UnknownTopicID, "")
			}
		}
		if rt.ErrorCode == 0 {
			name := topic.Name
			rt.Topic, rt.TopicID = &name, topic.ID
			// A topic named once and addressed once more by id is removed once.
			if !deleted[topic.ID] {
				deleted[topic.ID] = true
				records = append(records, &metadata.RemoveTopicRecord{TopicID: topic.ID})
			}
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return records, resp
}

// CreatePartitions computes the records and response of a CreatePartitions request.
func (c *Controller) CreatePartitions(im *metadata.Image, req *kmsg.CreatePartitionsRequest) ([]metadata.Record, *kmsg.CreatePartitionsResponse) {
	resp := kmsg.NewPtrCreatePartitionsResponse()
	resp.Version = req.Version
	counts := map[string]int{}
	for _, t := range req.Topics {
		counts[t.Topic]++
	}
	var records []metadata.Record
	total := 0
	limit := c.partitionLimit(im)
	for _, t := range req.Topics {
		rt := kmsg.NewCreatePartitionsResponseTopic()
		rt.Topic = t.Topic
		var recs []metadata.Record
		if counts[t.Topic] > 1 {
			rt.ErrorCode, rt.ErrorMessage = errMessage(kerr.InvalidRequest, "duplicate topic name "+t.Topic+" in the request")
		} else {
			var err *kerr.Error
			var msg string
			recs, err, msg = createPartitions(im, t)
			if err != nil {
				rt.ErrorCode, rt.ErrorMessage = errMessage(err, msg)
			}
		}
		if rt.ErrorCode == 0 && total+len(recs) > MaxRecordsPerOperation {
			rt.ErrorCode, rt.ErrorMessage = errMessage(kerr.PolicyViolation, fmt.Sprintf("the request would create more than %d metadata records", MaxRecordsPerOperation))
		}
		if rt.ErrorCode == 0 {
			if msg, ok := limit.admit(recs); !ok {
				rt.ErrorCode, rt.ErrorMessage = errMessage(kerr.PolicyViolation, msg)
			}
		}
		if rt.ErrorCode == 0 {
			total += len(recs)
		}
		if rt.ErrorCode == 0 && !req.ValidateOnly {
			records = append(records, recs...)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return records, resp
}

func createPartitions(im *metadata.Image, t kmsg.CreatePartitionsRequestTopic) ([]metadata.Record, *kerr.Error, string) {
	topic, ok := im.Topic(t.Topic)
	if !ok {
		return nil, kerr.UnknownTopicOrPartition, ""
	}
	current := int32(len(topic.Partitions))
	switch {
	case t.Count < current:
		return nil, kerr.InvalidPartitions, fmt.Sprintf("the topic %s currently has %d partition(s); %d would not be an increase", t.Topic, current, t.Count)
	case t.Count == current:
		return nil, kerr.InvalidPartitions, fmt.Sprintf("topic already has %d partition(s)", current)
	}
	adding := t.Count - current
	if adding >= MaxRecordsPerOperation {
		return nil, kerr.InvalidPartitions, fmt.Sprintf("cannot create more than %d partitions in one request", MaxRecordsPerOperation-1)
	}
	rf := 1
	if p0, ok := topic.Partitions[0]; ok {
		rf = len(p0.Replicas)
	}
	var assignment [][]int32
	if t.Assignment != nil {
		if int32(len(t.Assignment)) != adding {
			return nil, kerr.InvalidReplicaAssignment, fmt.Sprintf("attempted to add %d additional partition(s), but only %d assignment(s) were specified", adding, len(t.Assignment))
		}
		for i, a := range t.Assignment {
			if err := checkReplicas(im, current+int32(i), a.Replicas, rf); err != nil {
				return nil, kerr.InvalidReplicaAssignment, err.Error()
			}
			assignment = append(assignment, a.Replicas)
		}
	} else {
		brokers := rackAlternated(im, unfencedBrokers(im))
		if rf > len(brokers) {
			return nil, kerr.InvalidReplicationFactor, fmt.Sprintf(
				"unable to replicate the partition %d time(s): the target replication factor of %d cannot be reached because only %d broker(s) are registered", rf, rf, len(brokers))
		}
		assignment = placeReplicas(brokers, t.Topic, current, adding, int16(rf))
	}
	var recs []metadata.Record
	for i, replicas := range assignment {
		recs = append(recs, newPartitionRecord(im, topic.ID, current+int32(i), replicas))
	}
	return recs, nil, ""
}
