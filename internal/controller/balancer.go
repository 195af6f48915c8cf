package controller

// The balancer's bridge between the metadata image and the pure planner
// (internal/controller/balance): the planner's input as the active
// controller knows the cluster, and a plan as the AlterPartitionReassignments
// request that executes it through the ordinary reassignment machinery.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/controller/balance"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// BalanceInput is the planner's input for im: every registered broker
// (unfenced ones Alive, fenced ones Fenced, those in decommissioning
// Decommissioning) and every partition with its target replicas; a
// partition being reassigned is pinned. sizes gives a partition's bytes;
// nil (the controller knows no sizes) balances by count.
func BalanceInput(im *metadata.Image, decommissioning []int32, sizes func(kafka.TopicPartition) int64) ([]balance.Broker, []balance.Partition) {
	var brokers []balance.Broker
	for _, id := range im.BrokerIDs() {
		b, _ := im.Broker(id)
		out := balance.Broker{ID: id}
		if b.Rack != nil {
			out.Rack = *b.Rack
		}
		switch {
		case slices.Contains(decommissioning, id):
			out.State = balance.Decommissioning
		case b.Fenced:
			out.State = balance.Fenced
		}
		brokers = append(brokers, out)
	}
	var parts []balance.Partition
	for _, name := range im.TopicNames() {
		t, _ := im.Topic(name)
		for _, p := range t.PartitionIDs() {
			st := t.Partitions[p]
			bp := balance.Partition{Topic: name, Partition: p, Pinned: st.Reassigning()}
			bp.Replicas = without(st.Replicas, st.RemovingReplicas)
			if sizes != nil {
				bp.Size = sizes(kafka.TopicPartition{Topic: name, Partition: p})
			}
			parts = append(parts, bp)
		}
	}
	return brokers, parts
}

// BalanceRequest is the AlterPartitionReassignments request that executes
// plan, nil when the plan is empty. The replication factor never changes.
func BalanceRequest(plan balance.Plan) *kmsg.AlterPartitionAssignmentsRequest {
	if len(plan.Reassignments) == 0 {
		return nil
	}
	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	req.TimeoutMillis = 60000
	var cur *kmsg.AlterPartitionAssignmentsRequestTopic
	for _, r := range plan.Reassignments {
		if cur == nil || cur.Topic != r.Topic {
			req.Topics = append(req.Topics, kmsg.NewAlterPartitionAssignmentsRequestTopic())
			cur = &req.Topics[len(req.Topics)-1]
			cur.Topic = r.Topic
		}
		rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
		rp.Partition, rp.Replicas = r.Partition, slices.Clone(r.Replicas)
		cur.Partitions = append(cur.Partitions, rp)
	}
	return req
}

// AutoBalance computes the plan for im by count and the records that
// start it, as the automatic balancer does on a broker's arrival or
// departure; execute false returns the plan only.
func (c *Controller) AutoBalance(im *metadata.Image, execute bool) ([]metadata.Record, balance.Plan) {
	brokers, parts := BalanceInput(im, nil, nil)
	plan := balance.Compute(brokers, parts, balance.Options{IgnoreBytes: true})
	req := BalanceRequest(plan)
	if !execute || req == nil {
		return nil, plan
	}
	recs, _ := c.AlterPartitionReassignments(im, req)
	return recs, plan
}
