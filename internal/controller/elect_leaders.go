package controller

// Leader elections on request (ElectLeaders, KIP-460) and the automatic
// preferred-leader rebalance (auto.leader.rebalance.enable).

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// Election types of ElectLeaders.
const (
	electionPreferred int8 = 0
	electionUnclean   int8 = 1
)

// ElectLeaders computes the records and response of an ElectLeaders
// request: a preferred election moves leadership to the first assigned
// replica when it is live and in the ISR (ELECTION_NOT_NEEDED when it
// already leads, PREFERRED_LEADER_NOT_AVAILABLE otherwise); an unclean one
// elects a live replica, even outside the ISR, for a leaderless partition
// (ELECTION_NOT_NEEDED when it has a leader). Null topics mean every
// partition, and then partitions needing nothing are left out, as Kafka does.
func (c *Controller) ElectLeaders(im *metadata.Image, req *kmsg.ElectLeadersRequest) ([]metadata.Record, *kmsg.ElectLeadersResponse) {
	resp := kmsg.NewPtrElectLeadersResponse()
	resp.Version = req.Version
	if req.ElectionType != electionPreferred && req.ElectionType != electionUnclean {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return nil, resp
	}
	type target struct {
		topic string
		parts []int32
	}
	all := req.Topics == nil
	var targets []target
	if all {
		for _, name := range im.TopicNames() {
			t, _ := im.Topic(name)
			targets = append(targets, target{topic: name, parts: t.PartitionIDs()})
		}
	} else {
		for _, t := range req.Topics {
			targets = append(targets, target{topic: t.Topic, parts: t.Partitions})
		}
	}
	usable := func(id int32) bool {
		b, ok := im.Broker(id)
		return ok && !b.Fenced
	}
	var recs []metadata.Record
	for _, tg := range targets {
		rt := kmsg.NewElectLeadersResponseTopic()
		rt.Topic = tg.topic
		topic, known := im.Topic(tg.topic)
		for _, p := range tg.parts {
			rp := kmsg.NewElectLeadersResponseTopicPartition()
			rp.Partition = p
			st, ok := metadata.PartitionState{}, false
			if known {
				st, ok = im.Partition(kafka.TopicPartition{Topic: tg.topic, Partition: p})
			}
			if !ok {
				rp.ErrorCode, rp.ErrorMessage = errMessage(kerr.UnknownTopicOrPartition, "")
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			leader, isr, code, msg := electOne(st, req.ElectionType, usable)
			if code == 0 {
				recs = append(recs, &metadata.PartitionChangeRecord{TopicID: topic.ID, Partition: p, Leader: leader, ISR: isr})
			} else if all && code == kerr.ElectionNotNeeded.Code {
				continue
			}
			rp.ErrorCode = code
			if msg != "" {
				rp.ErrorMessage = &msg
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		if len(rt.Partitions) > 0 {
			resp.Topics = append(resp.Topics, rt)
		}
	}
	return recs, resp
}

// electOne decides one partition's election: the new leader and ISR, or an
// error code with its message.
func electOne(st metadata.PartitionState, electionType int8, usable func(int32) bool) (int32, []int32, int16, string) {
	if electionType == electionUnclean {
		if st.Leader != metadata.NoLeader {
			return 0, nil, kerr.ElectionNotNeeded.Code, "the partition has a leader"
		}
		leader, isr := ElectLeader(st, usable, true)
		if leader == metadata.NoLeader {
			return 0, nil, kerr.EligibleLeadersNotAvailable.Code, "no live replica can lead the partition"
		}
		return leader, isr, 0, ""
	}
	if len(st.Replicas) == 0 {
		return 0, nil, kerr.PreferredLeaderNotAvailable.Code, "the partition has no replicas"
	}
	preferred := st.Replicas[0]
	if st.Leader == preferred {
		return 0, nil, kerr.ElectionNotNeeded.Code, "the preferred replica already leads"
	}
	if !usable(preferred) || !slices.Contains(st.ISR, preferred) {
		return 0, nil, kerr.PreferredLeaderNotAvailable.Code, fmt.Sprintf("preferred replica %d is not live and in sync", preferred)
	}
	return preferred, nil, 0, ""
}

// RebalanceLeaders returns the preferred-leader elections the automatic
// rebalance makes: every partition whose preferred replica (the first
// assigned) is live and in sync but does not lead gets it back as leader,
// as Kafka's KRaft controller does at each
// leader.imbalance.check.interval.seconds.
func RebalanceLeaders(im *metadata.Image) []metadata.Record {
	usable := func(id int32) bool {
		b, ok := im.Broker(id)
		return ok && !b.Fenced
	}
	var recs []metadata.Record
	forEachPartition(im, func(id kafka.UUID, p int32, st metadata.PartitionState) {
		if leader, _, code, _ := electOne(st, electionPreferred, usable); code == 0 {
			recs = append(recs, &metadata.PartitionChangeRecord{TopicID: id, Partition: p, Leader: leader})
		}
	})
	return recs
}
