package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/verify/history"
)

// Bounds of the admin faults' requests and waits.
const (
	adminRequestTimeout = 15 * time.Second
	adminWaitTimeout    = 60 * time.Second
	adminPoll           = 200 * time.Millisecond
	// planTimeout bounds the wait for a partition an admin fault fits.
	planTimeout = 15 * time.Second
)

// adminClient is the client the admin-API faults use.
type adminClient struct {
	cl  *kgo.Client
	adm *kadm.Client
}

func (a *adminClient) close() { a.cl.Close() }

func (n *Nemesis) adminClient() (*adminClient, error) {
	if n.admin != nil {
		return n.admin, nil
	}
	// kadm's Metadata answers from the client's cache while it is younger
	// than the min age (5 s by default), too stale to follow a move.
	opts := append([]kgo.Opt{kgo.SeedBrokers(n.t.BootstrapServers()...), kgo.MetadataMinAge(adminPoll / 2)}, n.opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("nemesis admin client: %w", err)
	}
	n.admin = &adminClient{cl: cl, adm: kadm.NewClient(cl)}
	return n.admin, nil
}

// move is an admin fault planned against the metadata: partition's
// replica set goes from from to to.
type move struct {
	partition int32
	from, to  []int32
	// leader is the new leader of a leader election.
	leader int32
	nodes  []int32
	detail string
}

// adminFault runs a leader election or a reassignment. A fault that
// cannot be planned (no metadata, no partition with a second in-sync
// replica) is skipped and not counted; one that fails is recorded with its
// error; neither stops the run, since the cluster is no worse for it.
func (n *Nemesis) adminFault(ctx context.Context, f fault) error {
	a, err := n.adminClient()
	if err != nil {
		return err
	}
	m, err := n.planMove(ctx, a, f)
	if err != nil {
		n.log.Warn("fault skipped", "kind", f.kind, "topic", n.topic, "err", err)
		return nil
	}
	n.rec.Record(history.Op{Kind: history.FaultStart, Process: "nemesis", Offset: -1, Topic: n.topic,
		Partition: m.partition, Fault: string(f.kind), Nodes: m.nodes, Detail: m.detail})
	n.count(f.kind)
	n.log.Info("fault", "kind", f.kind, "nodes", m.nodes, "detail", m.detail)
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), healTimeout)
	defer cancel()
	if f.kind == LeaderElection {
		err = n.elect(hctx, a, m)
	} else {
		err = n.reassignAndBack(ctx, hctx, a, m, f.hold)
	}
	end := history.Op{Kind: history.FaultEnd, Process: "nemesis", Offset: -1, Topic: n.topic,
		Partition: m.partition, Fault: string(f.kind), Nodes: m.nodes}
	if err != nil {
		end.Err = err.Error()
		n.log.Warn("admin fault failed", "kind", f.kind, "detail", m.detail, "err", err)
	}
	n.rec.Record(end)
	return nil
}

// planMove plans f against the metadata, trying again for a while when
// no partition fits (just after a fault, an ISR may not be whole yet).
func (n *Nemesis) planMove(ctx context.Context, a *adminClient, f fault) (move, error) {
	ctx, cancel := context.WithTimeout(ctx, planTimeout)
	defer cancel()
	for {
		md, err := n.metadata(ctx, a)
		if err == nil {
			r := rand.New(rand.NewPCG(f.seed, 0xad))
			m, ok := planElection(r, n.topic, md)
			if f.kind == Reassign {
				m, ok = planReassign(r, n.topic, md, f.hold)
			}
			if ok {
				return m, nil
			}
			err = errors.New("no partition fits")
		}
		if !sleep(ctx, adminPoll) {
			return move{}, err
		}
	}
}

func (n *Nemesis) metadata(ctx context.Context, a *adminClient) (kadm.Metadata, error) {
	rctx, cancel := context.WithTimeout(ctx, adminRequestTimeout)
	defer cancel()
	md, err := a.adm.Metadata(rctx, n.topic)
	if err != nil {
		return md, err
	}
	if td, ok := md.Topics[n.topic]; !ok || td.Err != nil {
		return md, fmt.Errorf("topic %s: %v", n.topic, td.Err)
	}
	return md, nil
}

// partitions are topic's partitions with a leader, in id order.
func partitions(topic string, md kadm.Metadata) []kadm.PartitionDetail {
	var out []kadm.PartitionDetail
	for _, p := range md.Topics[topic].Partitions {
		if p.Err == nil && p.Leader >= 0 {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Partition < out[j].Partition })
	return out
}

// planElection picks a partition with another in-sync replica and puts
// that replica first, so a preferred election makes it the leader.
func planElection(r *rand.Rand, topic string, md kadm.Metadata) (move, bool) {
	var fit []kadm.PartitionDetail
	for _, p := range partitions(topic, md) {
		if len(p.ISR) >= 2 {
			fit = append(fit, p)
		}
	}
	if len(fit) == 0 {
		return move{}, false
	}
	p := fit[r.IntN(len(fit))]
	var others []int32
	for _, id := range p.ISR {
		if id != p.Leader {
			others = append(others, id)
		}
	}
	if len(others) == 0 {
		return move{}, false
	}
	leader := others[r.IntN(len(others))]
	to := append([]int32{leader}, slices.DeleteFunc(slices.Clone(p.Replicas), func(id int32) bool { return id == leader })...)
	return move{partition: p.Partition, from: p.Replicas, to: to, leader: leader, nodes: sorted([]int32{p.Leader, leader}),
		detail: fmt.Sprintf("%s/%d leader %d -> %d (replicas %v -> %v, preferred election)", topic, p.Partition, p.Leader, leader, p.Replicas, to)}, true
}

// planReassign picks a partition and a new replica set for it: a
// follower swapped for a broker outside the set, or, when every broker
// holds it, a follower dropped (only from three or more replicas).
func planReassign(r *rand.Rand, topic string, md kadm.Metadata, hold time.Duration) (move, bool) {
	ps := partitions(topic, md)
	if len(ps) == 0 {
		return move{}, false
	}
	p := ps[r.IntN(len(ps))]
	var followers, outside []int32
	for _, id := range p.Replicas {
		if id != p.Leader {
			followers = append(followers, id)
		}
	}
	for _, b := range md.Brokers {
		if !slices.Contains(p.Replicas, b.NodeID) {
			outside = append(outside, b.NodeID)
		}
	}
	slices.Sort(outside)
	if len(followers) == 0 {
		return move{}, false
	}
	gone := followers[r.IntN(len(followers))]
	to := slices.DeleteFunc(slices.Clone(p.Replicas), func(id int32) bool { return id == gone })
	nodes := []int32{gone}
	switch {
	case len(outside) > 0:
		in := outside[r.IntN(len(outside))]
		to = append(to, in)
		nodes = append(nodes, in)
	case len(p.Replicas) < 3:
		return move{}, false
	}
	return move{partition: p.Partition, from: p.Replicas, to: to, nodes: sorted(nodes),
		detail: fmt.Sprintf("%s/%d replicas %v -> %v, back after %s", topic, p.Partition, p.Replicas, to, hold)}, true
}

// elect reorders the replicas and runs a preferred election, then waits
// until the metadata names the new leader.
func (n *Nemesis) elect(ctx context.Context, a *adminClient, m move) error {
	if err := n.reassign(ctx, a, m.partition, m.to); err != nil {
		return err
	}
	n.log.Debug("replicas reordered", "partition", m.partition, "replicas", m.to)
	rctx, cancel := context.WithTimeout(ctx, adminRequestTimeout)
	res, err := a.adm.ElectLeaders(rctx, kadm.ElectPreferredReplica, kadm.TopicsSet{n.topic: {m.partition: {}}})
	cancel()
	if err != nil {
		return fmt.Errorf("elect leaders: %w", err)
	}
	if r, ok := res[n.topic][m.partition]; ok && r.Err != nil && !errors.Is(r.Err, kerr.ElectionNotNeeded) {
		return fmt.Errorf("elect leader of %s/%d: %w %s", n.topic, m.partition, r.Err, r.ErrMessage)
	}
	n.log.Debug("preferred election done", "partition", m.partition, "result", res[n.topic][m.partition].Err)
	return n.await(ctx, a, m.partition, func(p kadm.PartitionDetail) bool { return p.Leader == m.leader },
		fmt.Sprintf("leader %d", m.leader))
}

// reassignAndBack moves the partition to m.to, holds, and moves it back
// to m.from; the hold ends early when ctx ends, the move back never
// depends on it (hctx).
func (n *Nemesis) reassignAndBack(ctx, hctx context.Context, a *adminClient, m move, hold time.Duration) error {
	err := n.reassign(hctx, a, m.partition, m.to)
	if err == nil {
		sleep(ctx, hold)
	}
	if back := n.reassign(hctx, a, m.partition, m.from); back != nil {
		return errors.Join(err, fmt.Errorf("moving back: %w", back))
	}
	return err
}

// reassign asks for replicas and waits until the reassignment is done.
func (n *Nemesis) reassign(ctx context.Context, a *adminClient, partition int32, replicas []int32) error {
	req := kadm.AlterPartitionAssignmentsReq{}
	req.Assign(n.topic, partition, replicas)
	rctx, cancel := context.WithTimeout(ctx, adminRequestTimeout)
	res, err := a.adm.AlterPartitionAssignments(rctx, req)
	cancel()
	if err != nil {
		return fmt.Errorf("reassign %s/%d to %v: %w", n.topic, partition, replicas, err)
	}
	if r, ok := res[n.topic][partition]; ok && r.Err != nil {
		return fmt.Errorf("reassign %s/%d to %v: %w %s", n.topic, partition, replicas, r.Err, r.ErrMessage)
	}
	n.log.Debug("reassignment accepted", "partition", partition, "replicas", replicas)
	return n.await(ctx, a, partition, func(p kadm.PartitionDetail) bool {
		return slices.Equal(p.Replicas, replicas) && n.reassignmentDone(ctx, a, partition)
	}, fmt.Sprintf("replicas %v", replicas))
}

// reassignmentDone reports whether no reassignment of partition is listed.
func (n *Nemesis) reassignmentDone(ctx context.Context, a *adminClient, partition int32) bool {
	rctx, cancel := context.WithTimeout(ctx, adminRequestTimeout)
	defer cancel()
	res, err := a.adm.ListPartitionReassignments(rctx, kadm.TopicsSet{n.topic: {partition: {}}})
	if err != nil {
		return false
	}
	_, listed := res[n.topic][partition]
	return !listed
}

// await polls the metadata until partition satisfies ok.
func (n *Nemesis) await(ctx context.Context, a *adminClient, partition int32, ok func(kadm.PartitionDetail) bool, what string) error {
	ctx, cancel := context.WithTimeout(ctx, adminWaitTimeout)
	defer cancel()
	last := "no metadata"
	for {
		md, err := n.metadata(ctx, a)
		if err == nil {
			p, found := md.Topics[n.topic].Partitions[partition]
			if found && ok(p) {
				return nil
			}
			last = fmt.Sprintf("leader %d, replicas %v, isr %v", p.Leader, p.Replicas, p.ISR)
		}
		if !sleep(ctx, adminPoll) {
			return fmt.Errorf("%s/%d: no %s after %s (%s)", n.topic, partition, what, adminWaitTimeout, last)
		}
	}
}
