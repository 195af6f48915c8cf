package controller

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// AssignReplicasToDirs is Kafka's handleAssignReplicasToDirs: each named
// replica of the broker is recorded in the named dir (a PartitionChangeRecord
// with the partition's Directories, when it changes); a replica assigned to
// a dir that is not among the broker's online dirs is then treated as on a
// failed dir (it leaves the ISR and its leadership moves). Per partition:
// UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION, or NOT_LEADER_OR_FOLLOWER
// when the broker is not a replica. The request fails as a whole with
// UNSUPPORTED_VERSION while directory assignment is off, and
// BROKER_ID_NOT_REGISTERED or STALE_BROKER_EPOCH as a heartbeat does.
func (c *Controller) AssignReplicasToDirs(im *metadata.Image, req *kmsg.AssignReplicasToDirsRequest) ([]metadata.Record, *kmsg.AssignReplicasToDirsResponse, error) {
	if !im.DirectoryAssignment() {
		return nil, nil, fmt.Errorf("%w: Directory assignment is not supported yet.", kerr.UnsupportedVersion)
	}
	b, ok := im.Broker(req.BrokerID)
	if !ok {
		return nil, nil, fmt.Errorf("%w: Broker ID %d is not currently registered", kerr.BrokerIDNotRegistered, req.BrokerID)
	}
	if b.Epoch != req.BrokerEpoch {
		return nil, nil, fmt.Errorf("%w: Expected broker epoch %d, but got broker epoch %d", kerr.StaleBrokerEpoch, b.Epoch, req.BrokerEpoch)
	}
	resp := kmsg.NewPtrAssignReplicasToDirsResponse()
	resp.Version = req.Version
	a := &dirAssigner{im: im, broker: b, dirs: map[tpKey][]kafka.UUID{}}
	for _, d := range req.Directories {
		rd := kmsg.NewAssignReplicasToDirsResponseDirectory()
		rd.ID = d.ID
		for _, t := range d.Topics {
			rt := kmsg.NewAssignReplicasToDirsResponseDirectoryTopic()
			rt.TopicID = t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewAssignReplicasToDirsResponseDirectoryTopicPartition()
				rp.Partition = p.Partition
				rp.ErrorCode = a.assign(kafka.UUID(t.TopicID), p.Partition, kafka.UUID(d.ID))
				rt.Partitions = append(rt.Partitions, rp)
			}
			rd.Topics = append(rd.Topics, rt)
		}
		resp.Directories = append(resp.Directories, rd)
	}
	return a.records(), resp, nil
}

type tpKey struct {
	topic kafka.UUID
	p     int32
}

// dirAssigner collects one request's assignments: the new Directories of
// each partition (later entries of the request win) and the partitions
// placed on an offline dir.
type dirAssigner struct {
	im      *metadata.Image
	broker  *metadata.Broker
	order   []tpKey
	dirs    map[tpKey][]kafka.UUID
	offline []tpKey
}

func (a *dirAssigner) assign(topicID kafka.UUID, p int32, dir kafka.UUID) int16 {
	t, ok := a.im.TopicByID(topicID)
	if !ok {
		return kerr.UnknownTopicID.Code
	}
	st, ok := t.Partitions[p]
	if !ok {
		return kerr.UnknownTopicOrPartition.Code
	}
	i := slices.Index(st.Replicas, a.broker.ID)
	if i < 0 {
		return kerr.NotLeaderForPartition.Code
	}
	k := tpKey{topicID, p}
	cur, seen := a.dirs[k]
	if !seen {
		cur = make([]kafka.UUID, len(st.Replicas))
		copy(cur, st.Directories)
		a.order = append(a.order, k)
	}
	cur[i] = dir
	a.dirs[k] = cur
	if dirOffline(a.broker, dir) && !slices.Contains(a.offline, k) {
		a.offline = append(a.offline, k)
	}
	return 0
}

func (a *dirAssigner) records() []metadata.Record {
	var recs []metadata.Record
	for _, k := range a.order {
		t, _ := a.im.TopicByID(k.topic)
		if st := t.Partitions[k.p]; !slices.Equal(st.Directories, a.dirs[k]) {
			recs = append(recs, &metadata.PartitionChangeRecord{TopicID: k.topic, Partition: k.p, Leader: metadata.NoLeaderChange, Directories: a.dirs[k]})
		}
	}
	for _, k := range a.offline {
		t, _ := a.im.TopicByID(k.topic)
		recs = append(recs, removeReplicaFromISR(a.im, k.topic, k.p, t.Partitions[k.p], a.broker.ID)...)
	}
	return recs
}
