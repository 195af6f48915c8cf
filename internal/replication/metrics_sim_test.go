package replication

import (
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/testutil"
)

// TestReplicationMetricsInSimCluster runs three real replica managers
// replicating over the in-process transport: follower fetches move the
// replication byte counters on both sides, and a follower cut off from
// its leader makes the partition under-replicated (an ISR shrink) until
// it is back (an expansion).
func TestReplicationMetricsInSimCluster(t *testing.T) {
	c := newSimCluster(t, 1, 3, 3, false)
	c.mu.Lock()
	leader, follower := c.mu.brokers[1].rm, c.mu.brokers[3].rm // r-0: replicas [1 2 3], leader 1
	c.mu.Unlock()
	b := batch(t, 10, testStart.UnixMilli())
	if res := leader.AppendRecords(t.Context(), AppendRequest{RequiredAcks: -1, Timeout: 10 * time.Second, ProduceVersion: 11,
		Partitions: []AppendPartition{{TP: tp(c.topic, 0), Records: b}}}); res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	// Both followers fetched the batch (acks=all waited for them).
	testutil.Eventually(t, 10*time.Second, func() bool {
		return leader.BrokerTopicStats().ReplicationBytesOut.Load() >= int64(2*len(b)) &&
			follower.BrokerTopicStats().ReplicationBytesIn.Load() >= int64(len(b))
	}, "replication bytes out of the leader and into follower 3 counted")
	if got := leader.ReplicaCounts().UnderReplicated; got != 0 {
		t.Fatalf("%d under-replicated partitions on broker 1 before any cut", got)
	}

	c.mu.Lock()
	c.mu.cut[[2]int32{3, 1}] = true
	c.mu.Unlock()
	testutil.Eventually(t, 10*time.Second, func() bool {
		shrinks, _, _ := leader.ISRChangeCounts()
		return leader.ReplicaCounts().UnderReplicated == 1 && shrinks >= 1
	}, "r-0 under-replicated on broker 1 once follower 3 is cut off")
	got := scrape(t, NewCollector(leader))
	if got["kafka_server_replicamanager_underreplicatedpartitions"] != 1 || got["kafka_server_replicamanager_isrshrinks_total"] < 1 {
		t.Fatalf("scrape of broker 1: under-replicated %v, ISR shrinks %v", got["kafka_server_replicamanager_underreplicatedpartitions"],
			got["kafka_server_replicamanager_isrshrinks_total"])
	}

	c.mu.Lock()
	delete(c.mu.cut, [2]int32{3, 1})
	c.mu.Unlock()
	testutil.Eventually(t, 10*time.Second, func() bool {
		_, expands, _ := leader.ISRChangeCounts()
		return leader.ReplicaCounts().UnderReplicated == 0 && expands >= 1
	}, "r-0 back in sync on broker 1 once follower 3 fetches again")
}
