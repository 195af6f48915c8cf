package controller

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/metadata"
)

func electRequest(electionType int8, topic string, parts ...int32) *kmsg.ElectLeadersRequest {
	req := kmsg.NewPtrElectLeadersRequest()
	req.Version, req.ElectionType = 2, electionType
	if topic != "" {
		rt := kmsg.NewElectLeadersRequestTopic()
		rt.Topic, rt.Partitions = topic, parts
		req.Topics = append(req.Topics, rt)
	}
	return req
}

func TestElectLeaders(t *testing.T) {
	c := New(Options{Configs: testPolicy{}})
	im, off := livenessImage(t)
	// Broker 1 (preferred of r3-0) fenced: 2 leads; unfenced again, 1 is
	// preferred but does not lead.
	im = applyRecords(t, im, off, FenceBroker(im, 1))
	if _, resp := c.ElectLeaders(im, electRequest(electionPreferred, "r3", 0)); resp.Topics[0].Partitions[0].ErrorCode != kerr.PreferredLeaderNotAvailable.Code {
		t.Fatalf("preferred replica fenced: %+v", resp.Topics[0].Partitions[0])
	}
	im = applyRecords(t, im, im.Offset()+1, UnfenceBroker(im, 1))
	// Not yet back in the ISR of r3-0: still not available.
	if _, resp := c.ElectLeaders(im, electRequest(electionPreferred, "r3", 0)); resp.Topics[0].Partitions[0].ErrorCode != kerr.PreferredLeaderNotAvailable.Code {
		t.Fatalf("preferred replica out of the ISR: %+v", resp.Topics[0].Partitions[0])
	}
	st := partition(t, im, "r3")
	topic, _ := im.Topic("r3")
	im = applyRecords(t, im, im.Offset()+1, []metadata.Record{&metadata.PartitionChangeRecord{TopicID: topic.ID, Partition: 0, Leader: metadata.NoLeaderChange, ISR: append(st.ISR, 1)}})
	recs, resp := c.ElectLeaders(im, electRequest(electionPreferred, "r3", 0, 7))
	if len(recs) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 || resp.Topics[0].Partitions[1].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("preferred election: %d records, %+v", len(recs), resp.Topics[0].Partitions)
	}
	if got := RebalanceLeaders(im); len(got) != 1 {
		t.Fatalf("automatic rebalance: %d records, want 1", len(got))
	}
	im = applyRecords(t, im, im.Offset()+1, recs)
	if st := partition(t, im, "r3"); st.Leader != 1 {
		t.Fatalf("after the election r3-0 is led by %d, want 1", st.Leader)
	}
	if recs, resp := c.ElectLeaders(im, electRequest(electionPreferred, "")); len(recs) != 0 || len(resp.Topics) != 0 {
		t.Fatalf("all partitions balanced: %d records, %+v", len(recs), resp.Topics)
	}
	if got := RebalanceLeaders(im); len(got) != 0 {
		t.Fatalf("balanced cluster rebalanced: %v", got)
	}
	if _, resp := c.ElectLeaders(im, electRequest(electionUnclean, "r1", 0)); resp.Topics[0].Partitions[0].ErrorCode != kerr.ElectionNotNeeded.Code {
		t.Fatalf("unclean election of a led partition: %+v", resp.Topics[0].Partitions[0])
	}
}
