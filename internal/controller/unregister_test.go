package controller

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// TestUnregisterBroker: an unknown id is BROKER_ID_NOT_REGISTERED with
// Kafka's message; a live broker leaves its leaderships and ISR places
// (not where it is the last member) and its registration goes.
func TestUnregisterBroker(t *testing.T) {
	c := New(Options{NumPartitions: 1, DefaultReplicationFactor: 2, Configs: testPolicy{},
		NewTopicID: func() (kafka.UUID, error) { return testID(100), nil }})
	im := replayAll(t, metadata.EmptyImage(), 0, metadata.BootstrapRecords("c1", 1))
	offset := int64(1)
	step := func(recs []metadata.Record) {
		im = replayAll(t, im, offset, recs)
		offset++
	}
	for _, id := range []int32{1, 2} {
		recs, resp := c.RegisterBroker(im, registration(id, int(id), -1))
		step(recs)
		recs, err := c.UnfenceBroker(im, id, resp.BrokerEpoch)
		if err != nil {
			t.Fatal(err)
		}
		step(recs)
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions = "t", -1
	rt.ReplicaAssignment = []kmsg.CreateTopicsRequestTopicReplicaAssignment{{Partition: 0, Replicas: []int32{1, 2}}}
	rt.ReplicationFactor = -1
	req.Topics = append(req.Topics, rt)
	recs, _ := c.CreateTopics(im, req)
	step(recs)

	unknown := kmsg.NewPtrUnregisterBrokerRequest()
	unknown.BrokerID = 7
	recs, resp := c.UnregisterBroker(im, unknown)
	if len(recs) != 0 || resp.ErrorCode != kerr.BrokerIDNotRegistered.Code || msgOf(resp.ErrorMessage) != ": Broker ID 7 is not currently registered" {
		t.Fatalf("unknown broker: %d records, %s %q", len(recs), errName(resp.ErrorCode), msgOf(resp.ErrorMessage))
	}

	u := kmsg.NewPtrUnregisterBrokerRequest()
	u.BrokerID = 1
	recs, resp = c.UnregisterBroker(im, u)
	if resp.ErrorCode != 0 {
		t.Fatalf("unregister 1: %s", errName(resp.ErrorCode))
	}
	step(recs)
	if _, ok := im.Broker(1); ok {
		t.Fatal("broker 1 still registered")
	}
	st, _ := im.Partition(kafka.TopicPartition{Topic: "t", Partition: 0})
	if st.Leader != 2 || !slices.Equal(st.ISR, []int32{2}) || !slices.Equal(st.Replicas, []int32{1, 2}) {
		t.Fatalf("after unregistering 1: leader %d isr %v replicas %v; want leader 2, isr [2], replicas kept", st.Leader, st.ISR, st.Replicas)
	}
	recs, resp = c.UnregisterBroker(im, u)
	if len(recs) != 0 || resp.ErrorCode != kerr.BrokerIDNotRegistered.Code {
		t.Fatalf("second unregister: %d records, %s", len(recs), errName(resp.ErrorCode))
	}
}
