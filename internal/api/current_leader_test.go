package api

import (
	"io"
	"log/slog"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/replication"
	"github.com/sluice-io/sluice/internal/replication/replicationtest"
	"github.com/sluice-io/sluice/internal/vfs"
)

// movedLeaderRegistry serves broker 1 after topic "t" moved away from it:
// its replica manager hosts no partition of "t" (broker 2 leads both in the
// image it applied), while the published image says partition 0 is led by
// broker 2 at epoch 4 and partition 1 by broker 3, fenced, at epoch 6.
func movedLeaderRegistry(t *testing.T) *Registry {
	t.Helper()
	fsys := vfs.NewMem()
	clk := clock.NewManual(dataTestStart)
	logs := replicationtest.NewMemLogs(fsys, clk)
	rm, err := replication.NewReplicaManager(replication.Options{
		BrokerID: 1, FS: fsys, Logs: logs, Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	delta, image, err := replicationtest.Image(2, replicationtest.Topic{Name: "t", ID: topicTID, Partitions: 2, LeaderEpoch: 3})
	if err != nil {
		t.Fatal(err)
	}
	rm.ApplyDelta(delta, image)
	t.Cleanup(func() {
		rm.Close()
		if err := logs.Close(); err != nil {
			t.Errorf("close logs: %v", err)
		}
	})

	cp := newFakeController(t, 1, 2, 3)
	cp.apply(
		&metadata.TopicRecord{Name: "t", TopicID: topicTID},
		&metadata.PartitionRecord{TopicID: topicTID, Partition: 0, Replicas: []int32{2, 1, 3}, ISR: []int32{2, 1, 3}, Leader: 2, LeaderEpoch: 4},
		&metadata.PartitionRecord{TopicID: topicTID, Partition: 1, Replicas: []int32{3, 1, 2}, ISR: []int32{3, 1, 2}, Leader: 3, LeaderEpoch: 6},
		&metadata.FenceBrokerRecord{BrokerID: 3, BrokerEpoch: 1},
	)
	deps := cp.brokerDeps()
	deps.Data = &DataPlaneDeps{Partitions: rm, FetchSessionCacheSlots: 1000, Clock: clk}
	r, err := NewRegistry(BrokerRelease(), RegistryInfo{}, BrokerHandlers(deps))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestProduceNotLeaderNamesCurrentLeader(t *testing.T) {
	r := movedLeaderRegistry(t)
	for v := int16(3); v <= 13; v++ {
		req := produceRequest(v, -1, "t", 0, testBatch(t, 1))
		p1 := kmsg.NewProduceRequestTopicPartition()
		p1.Partition, p1.Records = 1, testBatch(t, 1)
		req.Topics[0].Partitions = append(req.Topics[0].Partitions, p1)
		resp := reply[*kmsg.ProduceResponse](t, r, req)
		parts := resp.Topics[0].Partitions
		for _, p := range parts {
			if p.ErrorCode != kerr.NotLeaderForPartition.Code {
				t.Fatalf("produce v%d partition %d: %v, want NOT_LEADER_OR_FOLLOWER", v, p.Partition, kerr.ErrorForCode(p.ErrorCode))
			}
		}
		if v < 10 {
			// The fields do not exist before v10: the decoder leaves defaults.
			if parts[0].CurrentLeader.LeaderID != -1 || len(resp.Brokers) != 0 {
				t.Fatalf("produce v%d carries KIP-951 fields: %+v %+v", v, parts[0].CurrentLeader, resp.Brokers)
			}
			continue
		}
		if got := parts[0].CurrentLeader; got.LeaderID != 2 || got.LeaderEpoch != 4 {
			t.Fatalf("produce v%d partition 0 current leader %+v, want 2 at epoch 4", v, got)
		}
		// A fenced leader is named, but without an endpoint to go to.
		if got := parts[1].CurrentLeader; got.LeaderID != 3 || got.LeaderEpoch != 6 {
			t.Fatalf("produce v%d partition 1 current leader %+v, want 3 at epoch 6", v, got)
		}
		if len(resp.Brokers) != 1 || resp.Brokers[0].NodeID != 2 || resp.Brokers[0].Host != "h" || resp.Brokers[0].Port != 9002 {
			t.Fatalf("produce v%d node endpoints %+v, want only broker 2 at h:9002", v, resp.Brokers)
		}
	}
}

func TestProduceOtherErrorsNameNoLeader(t *testing.T) {
	r := movedLeaderRegistry(t)
	resp := reply[*kmsg.ProduceResponse](t, r, produceRequest(12, -1, "missing", 0, testBatch(t, 1)))
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != kerr.UnknownTopicOrPartition.Code || p.CurrentLeader.LeaderID != -1 || len(resp.Brokers) != 0 {
		t.Fatalf("unknown topic: %+v, brokers %+v", p, resp.Brokers)
	}
}

func TestFetchNotLeaderNamesCurrentLeader(t *testing.T) {
	r := movedLeaderRegistry(t)
	for v := int16(4); v <= 18; v++ {
		resp := fetch(t, r, fetchRequest(v, 0, -1, 0, 1))
		parts := resp.Topics[0].Partitions
		for _, p := range parts {
			if p.ErrorCode != kerr.NotLeaderForPartition.Code {
				t.Fatalf("fetch v%d partition %d: %v, want NOT_LEADER_OR_FOLLOWER", v, p.Partition, kerr.ErrorForCode(p.ErrorCode))
			}
		}
		if v < 16 {
			// Kafka fills the fields in from v16 only, though current_leader
			// exists from v12.
			if parts[0].CurrentLeader.LeaderID != -1 || len(resp.Brokers) != 0 {
				t.Fatalf("fetch v%d carries KIP-951 fields: %+v %+v", v, parts[0].CurrentLeader, resp.Brokers)
			}
			continue
		}
		if got := parts[0].CurrentLeader; got.LeaderID != 2 || got.LeaderEpoch != 4 {
			t.Fatalf("fetch v%d partition 0 current leader %+v, want 2 at epoch 4", v, got)
		}
		if got := parts[1].CurrentLeader; got.LeaderID != 3 || got.LeaderEpoch != 6 {
			t.Fatalf("fetch v%d partition 1 current leader %+v, want 3 at epoch 6", v, got)
		}
		if len(resp.Brokers) != 1 || resp.Brokers[0].NodeID != 2 || resp.Brokers[0].Port != 9002 {
			t.Fatalf("fetch v%d node endpoints %+v, want only broker 2", v, resp.Brokers)
		}
	}
}

func TestFetchFencedLeaderEpochNamesCurrentLeader(t *testing.T) {
	// Broker 1 leads "t" at epoch 3 (dataPlaneRegistry); the control plane's
	// image agrees and registers broker 1 on PLAINTEXT.
	_, rm := dataPlaneWithManager(t, 1000)
	cp := newFakeController(t, 1)
	cp.apply(
		&metadata.TopicRecord{Name: "t", TopicID: topicTID},
		&metadata.PartitionRecord{TopicID: topicTID, Partition: 0, Replicas: []int32{1}, ISR: []int32{1}, Leader: 1, LeaderEpoch: 3},
	)
	deps := cp.brokerDeps()
	deps.Data = &DataPlaneDeps{Partitions: rm, FetchSessionCacheSlots: 1000}
	r, err := NewRegistry(BrokerRelease(), RegistryInfo{}, BrokerHandlers(deps))
	if err != nil {
		t.Fatal(err)
	}
	stale := fetchRequest(16, 0, -1, 0)
	stale.Topics[0].Partitions[0].CurrentLeaderEpoch = 2
	resp := fetch(t, r, stale)
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != kerr.FencedLeaderEpoch.Code || p.CurrentLeader.LeaderID != 1 || p.CurrentLeader.LeaderEpoch != 3 {
		t.Fatalf("stale epoch: %v, current leader %+v; want FENCED_LEADER_EPOCH naming 1 at epoch 3", kerr.ErrorForCode(p.ErrorCode), p.CurrentLeader)
	}
	if len(resp.Brokers) != 1 || resp.Brokers[0].NodeID != 1 {
		t.Fatalf("node endpoints %+v, want broker 1", resp.Brokers)
	}

	// A successful fetch names no leader.
	ok := fetch(t, r, fetchRequest(16, 0, -1, 0))
	if p := ok.Topics[0].Partitions[0]; p.ErrorCode != 0 || p.CurrentLeader.LeaderID != -1 || len(ok.Brokers) != 0 {
		t.Fatalf("good fetch carries KIP-951 fields: %+v %+v", p, ok.Brokers)
	}
}
