package api

import (
	"context"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/metadata"
)

// txnCommitRequest is a TxnOffsetCommit of producer 5 for group g: one
// partition per (topic, partition) pair, offset 10 each.
func txnCommitRequest(gf *groupFixture, version int16, memberID string, generation int32, parts ...txnTP) *kmsg.TxnOffsetCommitRequest {
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.SetVersion(version)
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = "tx", "g", 5, 0
	req.MemberID, req.Generation = memberID, generation
	for _, p := range parts {
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = p.topic
		if topic, ok := gf.f.image.Topic(p.topic); ok {
			rt.TopicID = topic.ID
		}
		if p.topic == "unknown-id" {
			rt.TopicID = [16]byte{0xee}
		}
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = p.partition, 10
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	return req
}

func txnCommitCodes(resp *kmsg.TxnOffsetCommitResponse) []int16 {
	var codes []int16
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			codes = append(codes, p.ErrorCode)
		}
	}
	return codes
}

// txnTP names a partition of a test request.
type txnTP struct {
	topic     string
	partition int32
}

// TestTxnOffsetCommit: TxnOffsetCommit is served only with a
// TxnOffsetCommitter; unknown partitions are refused here (by name, or by
// id from v6); from v3 the generation and member are checked (a group that
// does not exist refuses a generation, a commit without one creates it);
// the committed offsets stay
// unseen (UNSTABLE_OFFSET_COMMIT for require_stable) until the
// transaction's result reaches the coordinator.
func TestTxnOffsetCommit(t *testing.T) {
	gf := newGroupFixture(t)
	gf.findCoordinator(t, "g")
	if slices.Contains(keysOf(gf.reg), 28) {
		t.Fatal("TxnOffsetCommit served without a TxnOffsetCommitter")
	}
	reg, err := NewRegistry(BrokerRelease(), RegistryInfo{}, BrokerHandlers(BrokerDeps{
		Groups: &GroupPlaneDeps{Coordinator: gf.coord, TxnOffsets: gf.coord, Image: func() *metadata.Image {
			gf.mu.Lock()
			defer gf.mu.Unlock()
			return gf.f.image
		}},
	}))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		version int16
		member  string
		gen     int32
		parts   []txnTP
		want    []int16
	}{
		{3, "x", 1, []txnTP{{"t", 0}}, []int16{kerr.IllegalGeneration.Code}}, // no group g yet
		{2, "x", 1, []txnTP{{"t", 0}}, []int16{0}},                           // v2 sends no member: g is created
		{3, "x", 1, []txnTP{{"t", 0}}, []int16{kerr.UnknownMemberID.Code}},
		{3, "", -1, []txnTP{{"t", 1}, {"t", 7}, {"nope", 0}}, []int16{0, kerr.UnknownTopicOrPartition.Code, kerr.UnknownTopicOrPartition.Code}},
		{6, "", -1, []txnTP{{"unknown-id", 0}, {"t", 1}}, []int16{kerr.UnknownTopicID.Code, 0}},
	} {
		resp := reply[*kmsg.TxnOffsetCommitResponse](t, reg, txnCommitRequest(gf, c.version, c.member, c.gen, c.parts...))
		if got := txnCommitCodes(resp); !slices.Equal(got, c.want) {
			t.Errorf("v%d member %q gen %d %v: %v, want %v", c.version, c.member, c.gen, c.parts, got, c.want)
		}
	}

	fetch := func(requireStable bool) kmsg.OffsetFetchResponseGroupTopicPartition {
		t.Helper()
		req := kmsg.NewPtrOffsetFetchRequest()
		req.SetVersion(8)
		req.RequireStable = requireStable
		req.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "g", Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: "t", Partitions: []int32{0}}}}}
		resp := reply[*kmsg.OffsetFetchResponse](t, reg, req)
		if g := resp.Groups[0]; g.ErrorCode != 0 {
			t.Fatalf("offset fetch: %v", kerr.ErrorForCode(g.ErrorCode))
		}
		return resp.Groups[0].Topics[0].Partitions[0]
	}
	if p := fetch(false); p.Offset != -1 || p.ErrorCode != 0 {
		t.Fatalf("pending offset fetched: %+v", p)
	}
	if p := fetch(true); p.Offset != -1 || p.ErrorCode != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("require_stable with a pending offset: %+v", p)
	}
	gf.coord.CompleteTransaction(context.Background(), 5, []int32{gf.coord.PartitionFor("g")}, true)
	if p := fetch(true); p.Offset != 10 || p.ErrorCode != 0 {
		t.Fatalf("after the transaction committed: %+v", p)
	}
}

// loadingCommitter answers every partition COORDINATOR_LOAD_IN_PROGRESS.
type loadingCommitter struct{}

func (loadingCommitter) CommitTransactionalOffsets(_ context.Context, req group.TxnCommitRequest) group.CommitResult {
	return group.CommitResult{Errors: slices.Repeat([]int16{kerr.CoordinatorLoadInProgress.Code}, len(req.Partitions))}
}

// TestTxnOffsetCommitLoadingBeforeV2: clients older than 2.0 (v0-1) get
// COORDINATOR_NOT_AVAILABLE instead of COORDINATOR_LOAD_IN_PROGRESS, as
// Kafka answers them (KAFKA-7296).
func TestTxnOffsetCommitLoadingBeforeV2(t *testing.T) {
	gf := newGroupFixture(t)
	reg, err := NewRegistry(BrokerRelease(), RegistryInfo{}, BrokerHandlers(BrokerDeps{
		Groups: &GroupPlaneDeps{TxnOffsets: loadingCommitter{}, Image: func() *metadata.Image { return gf.f.image }},
	}))
	if err != nil {
		t.Fatal(err)
	}
	for version, want := range map[int16]int16{0: kerr.CoordinatorNotAvailable.Code, 1: kerr.CoordinatorNotAvailable.Code, 2: kerr.CoordinatorLoadInProgress.Code} {
		resp := reply[*kmsg.TxnOffsetCommitResponse](t, reg, txnCommitRequest(gf, version, "", -1, txnTP{"t", 0}))
		if got := txnCommitCodes(resp); !slices.Equal(got, []int16{want}) {
			t.Errorf("v%d: %v, want %v", version, got, want)
		}
	}
}
