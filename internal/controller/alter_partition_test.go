package controller

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// alterImage holds brokers 1-3 (3 fenced) and topic "t" with partition 0 on
// replicas 1,2,3, leader 1, ISR [1 2], leader epoch 0, partition epoch 0.
func alterImage(t *testing.T) *metadata.Image {
	t.Helper()
	d := metadata.NewDelta(metadata.EmptyImage())
	off := int64(0)
	replay := func(r metadata.Record) {
		if err := d.Replay(off, 1, r); err != nil {
			t.Fatalf("replay %T: %v", r, err)
		}
		off++
	}
	for id := int32(1); id <= 3; id++ {
		replay(&metadata.RegisterBrokerRecord{BrokerID: id, BrokerEpoch: int64(10 * id), Fenced: true})
		if id != 3 {
			replay(&metadata.UnfenceBrokerRecord{BrokerID: id, BrokerEpoch: int64(10 * id)})
		}
	}
	replay(&metadata.TopicRecord{Name: "t", TopicID: testID(1)})
	replay(&metadata.PartitionRecord{TopicID: testID(1), Partition: 0, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2}, Leader: 1})
	return d.Apply()
}

func alterRequest(version int16, broker int32, brokerEpoch int64, leaderEpoch, partitionEpoch int32, isr ...int32) *kmsg.AlterPartitionRequest {
	req := kmsg.NewPtrAlterPartitionRequest()
	req.Version, req.BrokerID, req.BrokerEpoch = version, broker, brokerEpoch
	rt := kmsg.NewAlterPartitionRequestTopic()
	rt.Topic, rt.TopicID = "t", testID(1)
	rp := kmsg.NewAlterPartitionRequestTopicPartition()
	rp.LeaderEpoch, rp.PartitionEpoch = leaderEpoch, partitionEpoch
	if version >= 3 {
		for _, id := range isr {
			m := kmsg.NewAlterPartitionRequestTopicPartitionNewEpochISR()
			m.BrokerID, m.BrokerEpoch = id, -1
			rp.NewEpochISR = append(rp.NewEpochISR, m)
		}
	} else {
		rp.NewISR = isr
	}
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func TestAlterPartition(t *testing.T) {
	c := New(Options{Configs: testPolicy{}})
	im := alterImage(t)
	cases := []struct {
		name    string
		req     *kmsg.AlterPartitionRequest
		top     *kerr.Error
		code    *kerr.Error
		wantISR []int32 // nil: no record expected
	}{
		{"shrink", alterRequest(3, 1, 10, 0, 0, 1), nil, nil, []int32{1}},
		{"shrink v0 by name", alterRequest(0, 1, -1, 0, 0, 1), nil, nil, []int32{1}},
		{"unchanged isr writes nothing", alterRequest(3, 1, 10, 0, 0, 2, 1), nil, nil, nil},
		{"stale broker epoch", alterRequest(3, 1, 9, 0, 0, 1), kerr.StaleBrokerEpoch, nil, nil},
		{"unknown broker", alterRequest(3, 7, 10, 0, 0, 1), kerr.StaleBrokerEpoch, nil, nil},
		{"stale leader epoch", alterRequest(3, 1, 10, -1, 0, 1), nil, kerr.FencedLeaderEpoch, nil},
		{"leader epoch from the future", alterRequest(3, 1, 10, 1, 0, 1), nil, kerr.NotController, nil},
		{"not the leader", alterRequest(3, 2, 20, 0, 0, 2), nil, kerr.InvalidRequest, nil},
		{"stale partition epoch", alterRequest(3, 1, 10, 0, 5, 1), nil, kerr.InvalidUpdateVersion, nil},
		{"isr without the leader", alterRequest(3, 1, 10, 0, 0, 2), nil, kerr.InvalidRequest, nil},
		{"isr with a non-replica", alterRequest(3, 1, 10, 0, 0, 1, 4), nil, kerr.InvalidRequest, nil},
		{"isr with a duplicate", alterRequest(3, 1, 10, 0, 0, 1, 1), nil, kerr.InvalidRequest, nil},
		{"fenced broker added", alterRequest(3, 1, 10, 0, 0, 1, 2, 3), nil, kerr.IneligibleReplica, nil},
		{"fenced broker added v1", alterRequest(1, 1, 10, 0, 0, 1, 2, 3), nil, kerr.OperationNotAttempted, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			recs, resp := c.AlterPartition(im, tc.req)
			if tc.top != nil {
				if resp.ErrorCode != tc.top.Code || len(recs) != 0 {
					t.Fatalf("top-level code %d with %d records, want %s and none", resp.ErrorCode, len(recs), tc.top.Message)
				}
				return
			}
			if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
				t.Fatalf("unexpected response shape: %+v", resp)
			}
			p := resp.Topics[0].Partitions[0]
			if tc.code != nil {
				if p.ErrorCode != tc.code.Code || len(recs) != 0 {
					t.Fatalf("partition code %d with %d records, want %s and none", p.ErrorCode, len(recs), tc.code.Message)
				}
				return
			}
			if p.ErrorCode != 0 {
				t.Fatalf("partition code %d, want none", p.ErrorCode)
			}
			if tc.wantISR == nil {
				if len(recs) != 0 || p.PartitionEpoch != 0 {
					t.Fatalf("unchanged ISR: %d records, partition epoch %d", len(recs), p.PartitionEpoch)
				}
				return
			}
			if len(recs) != 1 {
				t.Fatalf("%d records, want 1", len(recs))
			}
			rec := recs[0].(*metadata.PartitionChangeRecord)
			if !slices.Equal(rec.ISR, tc.wantISR) || rec.Leader != metadata.NoLeaderChange || p.PartitionEpoch != 1 || !slices.Equal(p.ISR, tc.wantISR) {
				t.Fatalf("record %+v response %+v, want ISR %v at partition epoch 1", rec, p, tc.wantISR)
			}
			// The record, replayed, is the state the response promised.
			d := metadata.NewDelta(im)
			if err := d.Replay(im.Offset()+1, 1, rec); err != nil {
				t.Fatal(err)
			}
			st, _ := d.Apply().Partition(kafka.TopicPartition{Topic: "t", Partition: 0})
			if st.PartitionEpoch != p.PartitionEpoch || st.LeaderEpoch != p.LeaderEpoch || !slices.Equal(st.ISR, p.ISR) {
				t.Fatalf("replayed state %+v differs from response %+v", st, p)
			}
		})
	}
}

func TestAlterPartitionExpandsWithUnfencedBroker(t *testing.T) {
	c := New(Options{Configs: testPolicy{}})
	im := alterImage(t)
	recs, _ := c.AlterPartition(im, alterRequest(3, 1, 10, 0, 0, 1))
	d := metadata.NewDelta(im)
	if err := d.Replay(im.Offset()+1, 1, recs[0]); err != nil {
		t.Fatal(err)
	}
	im = d.Apply()
	// A request built on the old partition epoch is now stale.
	if _, resp := c.AlterPartition(im, alterRequest(3, 1, 10, 0, 0, 1, 2)); resp.Topics[0].Partitions[0].ErrorCode != kerr.InvalidUpdateVersion.Code {
		t.Fatalf("stale expansion answered %d", resp.Topics[0].Partitions[0].ErrorCode)
	}
	recs, resp := c.AlterPartition(im, alterRequest(3, 1, 10, 0, 1, 1, 2))
	if len(recs) != 1 || resp.Topics[0].Partitions[0].PartitionEpoch != 2 {
		t.Fatalf("expansion: %d records, response %+v", len(recs), resp.Topics[0].Partitions[0])
	}
}

func TestElectLeader(t *testing.T) {
	st := metadata.PartitionState{Replicas: []int32{1, 2, 3}, ISR: []int32{1, 3}, Leader: 1}
	up := func(ids ...int32) func(int32) bool { return func(id int32) bool { return slices.Contains(ids, id) } }
	if l, isr := ElectLeader(st, up(2, 3), false); l != 3 || !slices.Equal(isr, []int32{1, 3}) {
		t.Fatalf("clean election chose %d isr %v, want 3 with the ISR kept", l, isr)
	}
	if l, _ := ElectLeader(st, up(2), false); l != metadata.NoLeader {
		t.Fatalf("no ISR member alive: elected %d, want none", l)
	}
	if l, isr := ElectLeader(st, up(2), true); l != 2 || !slices.Equal(isr, []int32{2}) {
		t.Fatalf("unclean election chose %d isr %v, want 2 alone", l, isr)
	}
}

func TestUncleanLeaderElectionEnabled(t *testing.T) {
	im := alterImage(t)
	if UncleanLeaderElectionEnabled(im, "t") {
		t.Fatal("enabled by default")
	}
	set := func(im *metadata.Image, res metadata.ConfigResource, v string) *metadata.Image {
		d := metadata.NewDelta(im)
		if err := d.Replay(im.Offset()+1, 1, &metadata.ConfigRecord{ResourceType: res.Type, ResourceName: res.Name, Name: UncleanLeaderElectionKey, Value: &v}); err != nil {
			t.Fatal(err)
		}
		return d.Apply()
	}
	im = set(im, metadata.ConfigResource{Type: metadata.ConfigResourceBroker}, "true")
	if !UncleanLeaderElectionEnabled(im, "t") {
		t.Fatal("the cluster default true is not used")
	}
	im = set(im, metadata.ConfigResource{Type: metadata.ConfigResourceTopic, Name: "t"}, "false")
	if UncleanLeaderElectionEnabled(im, "t") {
		t.Fatal("the topic's false does not override the cluster default")
	}
}

func TestFenceBrokerElectsUncleanlyOnlyWhenAllowed(t *testing.T) {
	// Broker 1 leads with ISR [1]; brokers 2 live, 3 fenced.
	im := alterImage(t)
	d := metadata.NewDelta(im)
	if err := d.Replay(im.Offset()+1, 1, &metadata.PartitionChangeRecord{TopicID: testID(1), Partition: 0, Leader: metadata.NoLeaderChange, ISR: []int32{1}}); err != nil {
		t.Fatal(err)
	}
	im = d.Apply()
	leaderAfterFence := func(im *metadata.Image) (int32, []int32) {
		d := metadata.NewDelta(im)
		for _, r := range FenceBroker(im, 1) {
			if err := d.Replay(im.Offset()+1, 1, r); err != nil {
				t.Fatal(err)
			}
		}
		st, _ := d.Apply().Partition(kafka.TopicPartition{Topic: "t", Partition: 0})
		return st.Leader, st.ISR
	}
	if l, isr := leaderAfterFence(im); l != metadata.NoLeader || !slices.Equal(isr, []int32{1}) {
		t.Fatalf("clean: leader %d ISR %v, want none and [1]", l, isr)
	}
	v := "true"
	d = metadata.NewDelta(im)
	if err := d.Replay(im.Offset()+1, 1, &metadata.ConfigRecord{ResourceType: metadata.ConfigResourceTopic, ResourceName: "t", Name: UncleanLeaderElectionKey, Value: &v}); err != nil {
		t.Fatal(err)
	}
	if l, isr := leaderAfterFence(d.Apply()); l != 2 || !slices.Equal(isr, []int32{2}) {
		t.Fatalf("unclean: leader %d ISR %v, want 2 and [2]", l, isr)
	}
}
