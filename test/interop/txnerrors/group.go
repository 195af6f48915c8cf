package main

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// member is a classic group's only member, which never heartbeats (its session outlives
// the run).
type member struct {
	group      string
	id         string
	generation int32
}

// joinGroup makes group Stable with one consumer-protocol member: JoinGroup (v5, asked
// again with the member id Kafka requires), then SyncGroup as the leader.
func (r *runner) joinGroup(group string) *member {
	m, err := r.join(group)
	if r.fail(err) {
		return &member{group: group}
	}
	return m
}

func (r *runner) join(group string) (*member, error) {
	if r.err != nil {
		return nil, r.err
	}
	node, err := r.coordinator(group, 0)
	if err != nil {
		return nil, err
	}
	meta := kmsg.NewConsumerMemberMetadata()
	meta.Topics = []string{topic}
	m := &member{group: group}
	for attempt := 0; ; attempt++ {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Group, req.MemberID, req.ProtocolType = group, m.id, "consumer"
		req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 120000, 60000
		proto := kmsg.NewJoinGroupRequestProtocol()
		proto.Name, proto.Metadata = "range", meta.AppendTo(nil)
		req.Protocols = append(req.Protocols, proto)
		kresp, err := r.request(node, 5, req)
		if err != nil {
			return nil, err
		}
		resp := kresp.(*kmsg.JoinGroupResponse)
		if resp.ErrorCode == kerr.MemberIDRequired.Code && attempt == 0 {
			m.id = resp.MemberID
			continue
		}
		if resp.ErrorCode != 0 {
			return nil, fmt.Errorf("join %s: %w", group, kerr.ErrorForCode(resp.ErrorCode))
		}
		m.id, m.generation = resp.MemberID, resp.Generation
		break
	}
	assignment := kmsg.NewConsumerMemberAssignment()
	at := kmsg.NewConsumerMemberAssignmentTopic()
	at.Topic, at.Partitions = topic, []int32{0, 1}
	assignment.Topics = append(assignment.Topics, at)
	req := kmsg.NewPtrSyncGroupRequest()
	req.Group, req.Generation, req.MemberID = group, m.generation, m.id
	ga := kmsg.NewSyncGroupRequestGroupAssignment()
	ga.MemberID, ga.MemberAssignment = m.id, assignment.AppendTo(nil)
	req.GroupAssignment = append(req.GroupAssignment, ga)
	kresp, err := r.request(node, 3, req)
	if err != nil {
		return nil, err
	}
	if code := kresp.(*kmsg.SyncGroupResponse).ErrorCode; code != 0 {
		return nil, fmt.Errorf("sync %s: %w", group, kerr.ErrorForCode(code))
	}
	r.note("group %s Stable generation %d", group, m.generation)
	return m, nil
}

// txnOffsetCommit commits offset 1 of the topic's partition 0 for group in p's
// transaction at version v, as memberID of generation (v3+), and prints the answer.
func (r *runner) txnOffsetCommit(p *producer, v int16, group, memberID string, generation int32, what string) int16 {
	if r.err != nil {
		return -1
	}
	node, err := r.coordinator(group, 0)
	if r.fail(err) {
		return -1
	}
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = p.id, group, p.pid, p.epoch
	req.Generation, req.MemberID = generation, memberID
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic, rt.TopicID = topic, r.topicID
	rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset = 0, 1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kresp, err := r.request(node, v, req)
	if r.fail(err) {
		return -1
	}
	resp := kresp.(*kmsg.TxnOffsetCommitResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		r.fail(fmt.Errorf("txn offset commit v%d: %d topics answered", v, len(resp.Topics)))
		return -1
	}
	code := resp.Topics[0].Partitions[0].ErrorCode
	r.line(req.Key(), v, fmt.Sprintf("%s epoch %d", what, p.epoch), code)
	return code
}
