package controller

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// livenessImage has brokers 1-3 (epochs 10, 20, 30; 3 fenced), topic "r3"
// led by 1 with ISR [1 2] and topic "r1" whose only replica is 1.
func livenessImage(t *testing.T) (*metadata.Image, int64) {
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
	replay(&metadata.TopicRecord{Name: "r3", TopicID: testID(1)})
	replay(&metadata.PartitionRecord{TopicID: testID(1), Partition: 0, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2}, Leader: 1})
	replay(&metadata.TopicRecord{Name: "r1", TopicID: testID(2)})
	replay(&metadata.PartitionRecord{TopicID: testID(2), Partition: 0, Replicas: []int32{1}, ISR: []int32{1}, Leader: 1})
	return d.Apply(), off
}

// applyRecords replays recs on im.
func applyRecords(t *testing.T, im *metadata.Image, off int64, recs []metadata.Record) *metadata.Image {
	t.Helper()
	d := metadata.NewDelta(im)
	for _, r := range recs {
		if err := d.Replay(off, 1, r); err != nil {
			t.Fatalf("replay %T: %v", r, err)
		}
		off++
	}
	return d.Apply()
}

func partition(t *testing.T, im *metadata.Image, topic string) metadata.PartitionState {
	t.Helper()
	st, ok := im.Partition(kafka.TopicPartition{Topic: topic, Partition: 0})
	if !ok {
		t.Fatalf("no partition %s-0", topic)
	}
	return st
}

func TestFenceBrokerMovesLeadershipOrLeavesLeaderless(t *testing.T) {
	im, off := livenessImage(t)
	im = applyRecords(t, im, off, FenceBroker(im, 1))
	if b, _ := im.Broker(1); !b.Fenced {
		t.Fatal("broker 1 not fenced")
	}
	if st := partition(t, im, "r3"); st.Leader != 2 || len(st.ISR) != 1 || st.ISR[0] != 2 {
		t.Fatalf("r3-0 after fencing its leader: leader %d isr %v, want leader 2 isr [2]", st.Leader, st.ISR)
	}
	if st := partition(t, im, "r1"); st.Leader != metadata.NoLeader || len(st.ISR) != 1 || st.ISR[0] != 1 {
		t.Fatalf("r1-0 after fencing its only replica: leader %d isr %v, want leaderless with isr [1]", st.Leader, st.ISR)
	}
	if recs := FenceBroker(im, 1); recs != nil {
		t.Fatalf("fencing a fenced broker again: %v", recs)
	}
	im = applyRecords(t, im, im.Offset()+1, UnfenceBroker(im, 1))
	if st := partition(t, im, "r1"); st.Leader != 1 {
		t.Fatalf("r1-0 after its replica came back: leader %d, want 1", st.Leader)
	}
}

func TestBrokerHeartbeat(t *testing.T) {
	c := New(Options{Configs: testPolicy{}})
	im, _ := livenessImage(t)
	hb := func(id int32, epoch, offset int64, shutdown bool) ([]metadata.Record, *kmsg.BrokerHeartbeatResponse) {
		req := kmsg.NewPtrBrokerHeartbeatRequest()
		req.BrokerID, req.BrokerEpoch, req.CurrentMetadataOffset, req.WantShutdown = id, epoch, offset, shutdown
		return c.BrokerHeartbeat(im, req)
	}
	if _, resp := hb(9, 1, 0, false); resp.ErrorCode != kerr.BrokerIDNotRegistered.Code {
		t.Fatalf("unknown broker: error %d", resp.ErrorCode)
	}
	if _, resp := hb(3, 29, 100, false); resp.ErrorCode != kerr.StaleBrokerEpoch.Code {
		t.Fatalf("stale epoch: error %d", resp.ErrorCode)
	}
	if recs, resp := hb(3, 30, 28, false); len(recs) != 0 || !resp.IsFenced || resp.IsCaughtUp {
		t.Fatalf("broker behind its registration: recs %v fenced %t caught up %t", recs, resp.IsFenced, resp.IsCaughtUp)
	}
	if recs, resp := hb(3, 30, 29, false); len(recs) != 1 || resp.IsFenced || !resp.IsCaughtUp {
		t.Fatalf("caught-up broker: recs %v fenced %t", recs, resp.IsFenced)
	}
	recs, resp := hb(1, 10, 100, true)
	if !resp.ShouldShutdown || len(recs) != 3 {
		t.Fatalf("controlled shutdown: should shut down %t, %d records (want fence + 2 partition changes)", resp.ShouldShutdown, len(recs))
	}
}

func TestSessionsExpire(t *testing.T) {
	im, _ := livenessImage(t)
	s := NewSessions(9 * time.Second)
	t0 := time.Unix(1000, 0)
	s.Reset(t0)
	s.Heard(1, t0.Add(5*time.Second), 7)
	if v, ok := s.Get(1); !ok || v.MetadataOffset != 7 {
		t.Fatalf("session of broker 1: %+v %t", v, ok)
	}
	if got := s.Expired(im, t0.Add(9*time.Second)); len(got) != 0 {
		t.Fatalf("expired within the session: %v", got)
	}
	got := s.Expired(im, t0.Add(10*time.Second))
	if len(got) != 1 || got[0] != 2 {
		t.Fatalf("expired after 10s: %v, want [2] (1 heard at 5s, 3 fenced)", got)
	}
}

func TestRackAwarePlacement(t *testing.T) {
	d := metadata.NewDelta(metadata.EmptyImage())
	off := int64(0)
	for id, rack := range map[int32]string{1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"} {
		r := rack
		if err := d.Replay(off, 1, &metadata.RegisterBrokerRecord{BrokerID: id, BrokerEpoch: off + 1, Rack: &r}); err != nil {
			t.Fatal(err)
		}
		off++
	}
	im := d.Apply()
	got := rackAlternated(im, []int32{1, 2, 3, 4, 5, 6})
	if want := []int32{1, 3, 5, 2, 4, 6}; !slices.Equal(got, want) {
		t.Fatalf("rack-alternated order %v, want %v", got, want)
	}
	for p, replicas := range placeReplicas(got, "t", 0, 12, 3) {
		racks := map[string]bool{}
		for _, r := range replicas {
			b, _ := im.Broker(r)
			racks[*b.Rack] = true
		}
		if len(racks) != 3 {
			t.Fatalf("partition %d replicas %v span %d racks, want 3", p, replicas, len(racks))
		}
	}
}
