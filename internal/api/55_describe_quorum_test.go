package api

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestNotQuorumLeaderShape: a non-leader voter's answer carries
// NOT_LEADER_OR_FOLLOWER on __cluster_metadata-0 with the leader it knows,
// where Kafka's admin client reads it (and retries).
func TestNotQuorumLeaderShape(t *testing.T) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	req.SetVersion(2)
	resp := notQuorumLeader(req, 3)
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || resp.Topics[0].Topic != metadataTopic || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("shape: %+v", resp)
	}
	p := resp.Topics[0].Partitions[0]
	if p.Partition != 0 || p.ErrorCode != kerr.NotLeaderForPartition.Code || p.LeaderID != 3 {
		t.Fatalf("partition: %+v", p)
	}
	// It encodes at every served version.
	for v := int16(0); v <= 2; v++ {
		resp.SetVersion(v)
		out := kmsg.NewPtrDescribeQuorumResponse()
		out.SetVersion(v)
		if err := out.ReadFrom(resp.AppendTo(nil)); err != nil {
			t.Fatalf("v%d round trip: %v", v, err)
		}
		if out.Topics[0].Partitions[0].ErrorCode != kerr.NotLeaderForPartition.Code {
			t.Fatalf("v%d: %+v", v, out)
		}
	}
}
