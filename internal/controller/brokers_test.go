package controller

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// replayAll applies recs to im as one committed entry at offset would.
func replayAll(t *testing.T, im *metadata.Image, offset int64, recs []metadata.Record) *metadata.Image {
	t.Helper()
	d := metadata.NewDelta(im)
	for _, r := range recs {
		if err := d.Replay(offset, 1, r); err != nil {
			t.Fatalf("replay %T: %v", r, err)
		}
	}
	return d.Apply()
}

func registration(id int32, incarnation int, previousEpoch int64) *kmsg.BrokerRegistrationRequest {
	req := kmsg.NewPtrBrokerRegistrationRequest()
	req.BrokerID, req.ClusterID, req.IncarnationID = id, "c1", testID(incarnation)
	req.PreviousBrokerEpoch = previousEpoch
	req.Listeners = []kmsg.BrokerRegistrationRequestListener{{Name: "PLAINTEXT", Host: "localhost", Port: 9091}}
	return req
}

// TestRegisterBrokerPreviousEpoch: a live registration of another
// incarnation is refused unless the new one names its epoch as
// PreviousBrokerEpoch (KIP-966's clean stop); then the old one is fenced in
// the same entry, moving its leadership away.
func TestRegisterBrokerPreviousEpoch(t *testing.T) {
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
		if resp.ErrorCode != 0 {
			t.Fatalf("register %d: %v", id, kerr.ErrorForCode(resp.ErrorCode))
		}
		step(recs)
		recs, err := c.UnfenceBroker(im, id, resp.BrokerEpoch)
		if err != nil {
			t.Fatal(err)
		}
		step(recs)
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "t", 1, 2
	ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	ra.Replicas = []int32{1, 2}
	rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	rt.NumPartitions, rt.ReplicationFactor = -1, -1
	req.Topics = append(req.Topics, rt)
	recs, cresp := c.CreateTopics(im, req)
	if code := cresp.Topics[0].ErrorCode; code != 0 {
		t.Fatalf("create topic: %v", kerr.ErrorForCode(code))
	}
	step(recs)
	if st, _ := im.Partition(kafka.TopicPartition{Topic: "t", Partition: 0}); st.Leader != 1 {
		t.Fatalf("t-0 led by %d before the restart, want 1", st.Leader)
	}
	old, _ := im.Broker(1)

	for _, prev := range []int64{-1, old.Epoch - 1} {
		if _, resp := c.RegisterBroker(im, registration(1, 11, prev)); resp.ErrorCode != kerr.DuplicateBrokerRegistration.Code {
			t.Fatalf("previous epoch %d: got %v, want DUPLICATE_BROKER_REGISTRATION", prev, kerr.ErrorForCode(resp.ErrorCode))
		}
	}

	recs, resp := c.RegisterBroker(im, registration(1, 11, old.Epoch))
	if resp.ErrorCode != 0 {
		t.Fatalf("registration with the previous epoch: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	if resp.BrokerEpoch <= old.Epoch {
		t.Fatalf("new epoch %d not above the old %d", resp.BrokerEpoch, old.Epoch)
	}
	step(recs)
	b, _ := im.Broker(1)
	if b.Epoch != resp.BrokerEpoch || !b.Fenced || b.IncarnationID != testID(11) {
		t.Fatalf("registration after replay: %+v", b)
	}
	st, ok := im.Partition(kafka.TopicPartition{Topic: "t", Partition: 0})
	if !ok {
		t.Fatal("partition t-0 missing")
	}
	if st.Leader != 2 {
		t.Fatalf("leader %d after the old registration was fenced, want 2", st.Leader)
	}
}
