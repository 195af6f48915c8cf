package faults

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/records/recordstest"
	"github.com/sluice-io/sluice/internal/testcluster"
	"github.com/sluice-io/sluice/internal/testutil"
)

// cutHold is how long a node stays cut: longer than both
// replica.lag.time.max.ms and broker.session.timeout.ms, so the survivors
// fence it and shrink it out of every ISR.
const cutHold = time.Duration(sessionTimeoutMs+1500) * time.Millisecond

// TestReplicationSurvivesNetworkCut: the cluster and workload of
// TestReplicationSurvivesLeaderKillsAndStalls, with inter-node traffic
// through a fault-injecting proxy. The faults cut the leader of a partition
// in use off its peers (3 times; 20 in the long form), alternating a
// blackhole and refused connections, then cut a leader from one follower
// only, then cut the active controller off its peers; each cut
// lasts longer than replica.lag.time.max.ms and broker.session.timeout.ms,
// and is healed only after the survivors moved on, then the test waits
// for every ISR to be complete again. Clients keep reaching the cut node
// directly, so an isolated leader is offered writes it must not
// acknowledge. Afterwards every acknowledged value must be read back
// exactly once and in order per partition, and a consumer group reading
// during the faults must skip nothing and never see its commits go back.
func TestReplicationSurvivesNetworkCut(t *testing.T) {
	cuts := 3
	if os.Getenv("SLUICE_FAULTS_LONG") != "" {
		cuts = 20
	}
	c, addrs, adm := startFaultCluster(t, true)
	direct := directClients(t, addrs)
	awaitHealed(t, direct, 30*time.Second)

	w := startWorkload(t, addrs)
	var g *groupReader
	if os.Getenv("SLUICE_FAULTS_GROUP") != "0" {
		g = startGroupReader(t, addrs, adm)
	}
	w.awaitAcked(t, 100, 30*time.Second)
	firstFaultAcked := w.ackedCount()
	faults, isolatedAcks := 0, 0
	for i := range cuts {
		p := int32(i % faultPartitions)
		victim := int(awaitLeader(t, adm, p)) - 1
		mode := testcluster.Blackhole
		if i%2 == 1 {
			mode = testcluster.Refuse
		}
		faults++
		ctrlID, err := quorumLeaderFrom(direct[victim])
		if err != nil {
			ctrlID = -1
		}
		t.Logf("fault %d: cut node %d, leader of partition %d, off its peers (%s); node %d is the active controller",
			faults, victim+1, p, mode, ctrlID)
		isolatedAcks += count(cutAndHeal(t, c, direct, w, victim, mode, p, fmt.Sprintf("partition %d led by another node", p), func(cl *kgo.Client) error {
			md, err := metadataFrom(cl)
			if err != nil {
				return err
			}
			if leader := partitionLeader(md, p); leader == int32(victim+1) || leader < 0 {
				return fmt.Errorf("partition %d leader %d", p, leader)
			}
			return nil
		}))
	}

	// A partial partition: a partition's leader and one of its followers
	// lose each other while both still reach the third node.
	p := int32(cuts % faultPartitions)
	leader := int(awaitLeader(t, adm, p)) - 1
	follower, third := (leader+1)%len(direct), (leader+2)%len(direct)
	faults++
	t.Logf("fault %d: cut the link between node %d, leader of partition %d, and node %d (%s)",
		faults, leader+1, p, follower+1, testcluster.Blackhole)
	cutLinkAndHeal(t, c, direct, w, leader, follower, third, p)

	ctrl := -1
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		id, err := quorumLeaderFrom(direct[0])
		ctrl = int(id) - 1
		return err
	}, "active controller")
	ctrlLeads := int32(-1) // a partition the controller leads, to probe
	if md, err := metadataFrom(direct[ctrl]); err == nil {
		for p := range int32(faultPartitions) {
			if partitionLeader(md, p) == int32(ctrl+1) {
				ctrlLeads = p
			}
		}
	}
	faults++
	t.Logf("fault %d: cut node %d, the active controller, off its peers (%s)", faults, ctrl+1, testcluster.Blackhole)
	isolatedAcks += count(cutAndHeal(t, c, direct, w, ctrl, testcluster.Blackhole, ctrlLeads, "another active controller",
		func(cl *kgo.Client) error {
			id, err := quorumLeaderFrom(cl)
			if err == nil && int(id)-1 == ctrl {
				err = fmt.Errorf("node %d still leads the quorum", id)
			}
			return err
		}))
	w.stop(t)

	acked := w.ackedValues()
	var skipped, wentBack int
	if g != nil {
		skipped, wentBack = g.finish(t, acked)
	}
	total, lost, duplicated, reordered := compareReadBack(acked, readBack(t, addrs, adm))
	t.Logf("faults injected %d, values acknowledged %d (%d after the first fault), lost %d, duplicated %d, reordered %d",
		faults, total, total-firstFaultAcked, lost, duplicated, reordered)
	if g != nil {
		t.Logf("consumer group: acknowledged values skipped %d, committed offsets gone back %d", skipped, wentBack)
	}
	t.Logf("acks=all writes acknowledged by a cut node: %d", isolatedAcks)
	if lost+duplicated+reordered+skipped+wentBack+isolatedAcks != 0 {
		t.Fatalf("lost %d, duplicated %d, reordered %d, skipped by the group %d, commits gone back %d, acknowledged by a cut node %d: want 0",
			lost, duplicated, reordered, skipped, wentBack, isolatedAcks)
	}
	if total-firstFaultAcked < 1000 {
		t.Fatalf("only %d values acknowledged after the first fault, want at least 1000", total-firstFaultAcked)
	}
}

// cutAndHeal cuts node victim off its peers and waits until a survivor's
// view satisfies movedOn. While the cut lasts (at least cutHold) it offers
// the victim, still reachable by clients, an acks=all write to partition
// probe (skipped when negative), which it must not acknowledge. It heals the
// cut, waits until every broker agrees every ISR is complete and the
// producers are acknowledged again, and returns whether the probe was
// acknowledged.
func cutAndHeal(t *testing.T, c *testcluster.Processes, direct []*kgo.Client, w *workload, victim int,
	mode testcluster.CutMode, probe int32, what string, movedOn func(*kgo.Client) error) (probeAcked bool) {
	t.Helper()
	start := time.Now()
	ackedAtCut := w.ackedCount()
	c.Cut(victim, mode)
	survivor := direct[(victim+1)%len(direct)]
	testutil.EventuallyNoError(t, 30*time.Second, func() error { return movedOn(survivor) }, "%s", what)
	movedAfter := time.Since(start)
	outcome := "no partition to probe"
	if probe >= 0 {
		probeAcked, outcome = probeIsolated(direct[victim], probe, fmt.Sprintf("probe-%d", start.UnixNano()))
	}
	if rest := cutHold - time.Since(start); rest > 0 {
		time.Sleep(rest) // part of the fault: the cut lasts at least cutHold
	}
	ackedInCut := w.ackedCount() - ackedAtCut
	c.Heal(victim)
	healedAt := time.Now()
	awaitHealed(t, direct, 60*time.Second)
	healedAfter := time.Since(healedAt)
	before := w.ackedCount()
	w.awaitAcked(t, before+50, 30*time.Second)
	t.Logf("  %s after %s; the cut node answered an acks=all write with %s; %d values acknowledged during the cut of %s; every ISR complete %s after the heal",
		what, movedAfter.Round(time.Millisecond), outcome, ackedInCut, healedAt.Sub(start).Round(time.Millisecond),
		healedAfter.Round(time.Millisecond))
	return probeAcked
}

// probeIsolated sends one acks=all record for partition p straight to the
// broker behind cl, cut off its peers: with its followers unreachable and
// the controller out of reach it must not acknowledge it (Kafka answers
// REQUEST_TIMED_OUT once the request's timeout passes, or
// NOT_ENOUGH_REPLICAS / NOT_LEADER_OR_FOLLOWER).
func probeIsolated(cl *kgo.Client, p int32, value string) (acked bool, outcome string) {
	md, err := metadataFrom(cl)
	if err != nil || len(md.Topics) != 1 {
		return false, fmt.Sprintf("no metadata (%v)", err)
	}
	batch, err := recordstest.Build(recordstest.Values(time.Now().UnixMilli(), value))
	if err != nil {
		return false, fmt.Sprintf("no batch (%v)", err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 2000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = faultTopic, md.Topics[0].TopicID
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = p, batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		return false, fmt.Sprintf("a request error (%v)", err)
	}
	pr, ok := resp.(*kmsg.ProduceResponse)
	if !ok || len(pr.Topics) != 1 || len(pr.Topics[0].Partitions) != 1 {
		return false, fmt.Sprintf("an unexpected response %T", resp)
	}
	code := pr.Topics[0].Partitions[0].ErrorCode
	if code == 0 {
		return true, fmt.Sprintf("success at offset %d", pr.Topics[0].Partitions[0].BaseOffset)
	}
	return false, kerr.ErrorForCode(code).Error()
}

// cutLinkAndHeal cuts the link between nodes a and b, waits until the
// third node's metadata shows partition p's ISR shrunk (the leader drops
// the unreachable follower, or the controller fences whichever of them
// lost it), holds the cut for at least cutHold, heals it and waits until
// every ISR is complete and the producers are acknowledged again.
func cutLinkAndHeal(t *testing.T, c *testcluster.Processes, direct []*kgo.Client, w *workload, a, b, third int, p int32) {
	t.Helper()
	start := time.Now()
	ackedAtCut := w.ackedCount()
	c.CutLink(a, b, testcluster.Blackhole)
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		md, err := metadataFrom(direct[third])
		if err != nil {
			return err
		}
		for _, mt := range md.Topics {
			for _, mp := range mt.Partitions {
				if mp.Partition == p && len(mp.ISR) < len(mp.Replicas) {
					return nil
				}
			}
		}
		return fmt.Errorf("partition %d's ISR complete", p)
	}, "partition %d's ISR shrunk", p)
	shrunkAfter := time.Since(start)
	if rest := cutHold - time.Since(start); rest > 0 {
		time.Sleep(rest) // part of the fault: the cut lasts at least cutHold
	}
	ackedInCut := w.ackedCount() - ackedAtCut
	c.HealLink(a, b)
	healedAt := time.Now()
	awaitHealed(t, direct, 60*time.Second)
	healedAfter := time.Since(healedAt)
	before := w.ackedCount()
	w.awaitAcked(t, before+50, 30*time.Second)
	t.Logf("  ISR shrunk after %s; %d values acknowledged during the cut of %s; every ISR complete %s after the heal",
		shrunkAfter.Round(time.Millisecond), ackedInCut, healedAt.Sub(start).Round(time.Millisecond),
		healedAfter.Round(time.Millisecond))
}

func count(b bool) int {
	if b {
		return 1
	}
	return 0
}

// compareReadBack checks each partition's log against the values the
// producer was told were acknowledged, in acknowledgement order.
func compareReadBack(acked, logs map[int32][]string) (total, lost, duplicated, reordered int) {
	for p := range int32(faultPartitions) {
		pos := make(map[string]int)
		count := make(map[string]int)
		for i, v := range logs[p] {
			count[v]++
			if _, ok := pos[v]; !ok {
				pos[v] = i
			}
		}
		for _, n := range count {
			duplicated += n - 1
		}
		last := -1
		for _, v := range acked[p] {
			total++
			at, ok := pos[v]
			if !ok {
				lost++
				continue
			}
			if at < last {
				reordered++
			}
			last = at
		}
	}
	return total, lost, duplicated, reordered
}

// directClients are one client per broker address whose requests go to
// that broker only (through its seed connection): the view of each node,
// a cut one's stale image included.
func directClients(t *testing.T, addrs []string) []*kgo.Client {
	var out []*kgo.Client
	for _, a := range addrs {
		cl, err := kgo.NewClient(kgo.SeedBrokers(a), kgo.RequestRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		out = append(out, cl)
	}
	return out
}

func metadataFrom(cl *kgo.Client) (*kmsg.MetadataResponse, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(faultTopic)
	req.Topics = append(req.Topics, rt)
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		return nil, err
	}
	md, ok := resp.(*kmsg.MetadataResponse)
	if !ok {
		return nil, fmt.Errorf("metadata answered %T", resp)
	}
	return md, nil
}

// partitionLeader is p's leader in md, or -1.
func partitionLeader(md *kmsg.MetadataResponse, p int32) int32 {
	for _, mt := range md.Topics {
		for _, mp := range mt.Partitions {
			if mp.Partition == p && mp.ErrorCode == 0 {
				return mp.Leader
			}
		}
	}
	return -1
}

// awaitHealed waits until every broker, asked directly, lists all brokers
// and the same leader and leader epoch for every partition, with a complete
// ISR: asking any one broker could read a formerly cut node's stale image.
func awaitHealed(t *testing.T, direct []*kgo.Client, timeout time.Duration) {
	t.Helper()
	testutil.EventuallyNoError(t, timeout, func() error {
		var first map[int32][2]int32
		for i, cl := range direct {
			md, err := metadataFrom(cl)
			if err != nil {
				return fmt.Errorf("node %d: %w", i+1, err)
			}
			if len(md.Brokers) != len(direct) {
				return fmt.Errorf("node %d lists %d brokers", i+1, len(md.Brokers))
			}
			view := make(map[int32][2]int32)
			for _, mt := range md.Topics {
				if len(mt.Partitions) != faultPartitions {
					return fmt.Errorf("node %d: %d partitions", i+1, len(mt.Partitions))
				}
				for _, mp := range mt.Partitions {
					if mp.ErrorCode != 0 || mp.Leader < 0 || len(mp.ISR) != len(mp.Replicas) {
						return fmt.Errorf("node %d: partition %d error %d leader %d ISR %v replicas %v",
							i+1, mp.Partition, mp.ErrorCode, mp.Leader, mp.ISR, mp.Replicas)
					}
					view[mp.Partition] = [2]int32{mp.Leader, mp.LeaderEpoch}
				}
			}
			if first == nil {
				first = view
				continue
			}
			for p, lv := range view {
				if first[p] != lv {
					return fmt.Errorf("partition %d: node 1 sees leader/epoch %v, node %d %v", p, first[p], i+1, lv)
				}
			}
		}
		return nil
	}, "every broker sees every ISR complete")
}

// quorumLeaderFrom asks one broker (it forwards to the active controller
// it knows) which voter leads the metadata quorum.
func quorumLeaderFrom(cl *kgo.Client) (int32, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = append(req.Topics, rt)
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		return -1, err
	}
	dq, ok := resp.(*kmsg.DescribeQuorumResponse)
	if !ok {
		return -1, fmt.Errorf("describe quorum answered %T", resp)
	}
	if err := kerr.ErrorForCode(dq.ErrorCode); err != nil {
		return -1, err
	}
	if len(dq.Topics) != 1 || len(dq.Topics[0].Partitions) != 1 {
		return -1, errors.New("describe quorum: no __cluster_metadata partition")
	}
	qp := dq.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(qp.ErrorCode); err != nil {
		return -1, err
	}
	if qp.LeaderID < 0 || !slices.ContainsFunc(qp.CurrentVoters, func(v kmsg.DescribeQuorumResponseTopicPartitionReplicaState) bool {
		return v.ReplicaID == qp.LeaderID
	}) {
		return -1, fmt.Errorf("describe quorum: leader %d", qp.LeaderID)
	}
	return qp.LeaderID, nil
}
