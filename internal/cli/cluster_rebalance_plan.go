package cli

// The cluster as the balancer's planner needs it, read with Kafka's
// requests: DescribeCluster (every registered broker, fenced ones
// included, with its rack), Metadata (replicas), ListPartitionReassignments
// (moves in progress: pinned, counted at their target) and DescribeLogDirs
// (sizes: a partition's size is its largest replica's). The plan is
// computed here with the controller's planner package
// (internal/controller/balance), the one the active controller's automatic
// mode runs.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/controller/balance"
)

// clusterView is what a plan is computed from.
type clusterView struct {
	brokers []balance.Broker
	parts   []balance.Partition
	// fenced lists registered brokers that are fenced (stopped or
	// unreachable).
	fenced map[int32]bool
	// leaving lists, per broker, the moves in progress that take a replica
	// off it (Replicas is the target): parts shows those partitions at
	// their target, but the broker still holds them (and may be their only
	// in-sync replica) until the move completes.
	leaving map[int32][]balance.Reassignment
	// sizes are replica sizes by broker, topic and partition.
	sizes kadm.DescribedAllLogDirs
}

// describeBrokers lists every registered broker, fenced ones included
// (DescribeCluster v2).
func describeBrokers(ctx context.Context, cl *kgo.Client) ([]kmsg.DescribeClusterResponseBroker, error) {
	req := kmsg.NewPtrDescribeClusterRequest()
	req.IncludeFencedBrokers = true
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("describe cluster: %w", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, fmt.Errorf("describe cluster: %w", err)
	}
	return resp.Brokers, nil
}

// loadClusterView reads the cluster; decommissioning brokers give every
// replica away.
func loadClusterView(ctx context.Context, cl *kgo.Client, adm *kadm.Client, decommissioning []int32) (*clusterView, error) {
	brokers, err := describeBrokers(ctx, cl)
	if err != nil {
		return nil, err
	}
	v := &clusterView{fenced: map[int32]bool{}, leaving: map[int32][]balance.Reassignment{}}
	for _, b := range brokers {
		out := balance.Broker{ID: b.NodeID}
		if b.Rack != nil {
			out.Rack = *b.Rack
		}
		switch {
		case slices.Contains(decommissioning, b.NodeID):
			out.State = balance.Decommissioning
		case b.IsFenced:
			out.State = balance.Fenced
		}
		v.fenced[b.NodeID] = b.IsFenced
		v.brokers = append(v.brokers, out)
	}
	md, err := adm.Metadata(ctx)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", describe(err))
	}
	moving, err := listAllReassignments(ctx, cl)
	if err != nil {
		return nil, err
	}
	if v.sizes, err = adm.DescribeAllLogDirs(ctx, nil); err != nil {
		return nil, fmt.Errorf("describe log dirs: %w", describe(err))
	}
	for _, t := range md.Topics.Sorted() {
		if t.Err != nil || t.IsInternal && t.Topic == "__cluster_metadata" {
			continue
		}
		for _, p := range t.Partitions.Sorted() {
			bp := balance.Partition{Topic: t.Topic, Partition: p.Partition, Replicas: slices.Clone(p.Replicas)}
			if m, ok := moving[t.Topic][p.Partition]; ok {
				bp.Pinned = true
				bp.Replicas = slices.DeleteFunc(slices.Clone(m.Replicas), func(id int32) bool { return slices.Contains(m.RemovingReplicas, id) })
				for _, id := range m.RemovingReplicas {
					v.leaving[id] = append(v.leaving[id], balance.Reassignment{Topic: t.Topic, Partition: p.Partition, Replicas: bp.Replicas})
				}
			}
			bp.Size = v.partitionSize(t.Topic, p.Partition)
			v.parts = append(v.parts, bp)
		}
	}
	return v, nil
}

// listAllReassignments lists every reassignment in progress (null topics:
// kadm's ListPartitionReassignments sends nothing for an empty set).
func listAllReassignments(ctx context.Context, cl *kgo.Client) (kadm.ListPartitionReassignmentsResponses, error) {
	req := kmsg.NewPtrListPartitionReassignmentsRequest()
	req.TimeoutMillis = 30000
	resp, err := req.RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil {
		return nil, fmt.Errorf("list partition reassignments: %w", describe(err))
	}
	out := kadm.ListPartitionReassignmentsResponses{}
	for _, t := range resp.Topics {
		ps := map[int32]kadm.ListPartitionReassignmentsResponse{}
		for _, p := range t.Partitions {
			ps[p.Partition] = kadm.ListPartitionReassignmentsResponse{
				Topic: t.Topic, Partition: p.Partition, Replicas: p.Replicas,
				AddingReplicas: p.AddingReplicas, RemovingReplicas: p.RemovingReplicas,
			}
		}
		out[t.Topic] = ps
	}
	return out, nil
}

// partitionSize is the largest replica of a partition (the leader's, or
// a lagging follower's smaller one never counts).
func (v *clusterView) partitionSize(topic string, p int32) int64 {
	var size int64
	for _, dirs := range v.sizes {
		if d, ok := dirs.LookupPartition(topic, p); ok && !d.IsFuture && d.Size > size {
			size = d.Size
		}
	}
	return size
}

// plan computes the balancing plan.
func (v *clusterView) plan(opts balance.Options) balance.Plan {
	return balance.Compute(v.brokers, v.parts, opts)
}

// printPlan writes the plan: one line per reassignment and the totals.
func printBalancePlan(out io.Writer, plan balance.Plan) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tFROM\tTO")
	for _, r := range plan.Reassignments {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", r.Topic, r.Partition, joinIDs(r.Old), joinIDs(r.Replicas))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "%d reassignments: %d replica moves copying %s, %d preferred-leader changes only\n",
		len(plan.Reassignments), plan.Moves, humanBytes(plan.MovedBytes), plan.Reorders)
	if plan.Unplaced > 0 {
		fmt.Fprintf(out, "%d replicas must leave a broker but no broker can take them (too few brokers or racks for the replication factor)\n", plan.Unplaced)
	}
	return nil
}

// printLoads writes each broker's replicas, preferred leaders and bytes
// after the plan.
func printLoads(out io.Writer, v *clusterView, plan balance.Plan) error {
	after := map[string][]int32{}
	for _, r := range plan.Reassignments {
		after[fmt.Sprintf("%s/%d", r.Topic, r.Partition)] = r.Replicas
	}
	type load struct {
		replicas, leaders int
		bytes             int64
	}
	loads := map[int32]*load{}
	for _, b := range v.brokers {
		loads[b.ID] = &load{}
	}
	for _, p := range v.parts {
		reps := p.Replicas
		if r, ok := after[fmt.Sprintf("%s/%d", p.Topic, p.Partition)]; ok {
			reps = r
		}
		for i, id := range reps {
			l := loads[id]
			if l == nil {
				l = &load{}
				loads[id] = l
			}
			l.replicas++
			l.bytes += p.Size
			if i == 0 {
				l.leaders++
			}
		}
	}
	ids := make([]int32, 0, len(loads))
	for id := range loads {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BROKER\tREPLICAS\tPREFERRED LEADERS\tBYTES")
	for _, id := range ids {
		l := loads[id]
		fmt.Fprintf(tw, "%d\t%d\t%d\t%s\n", id, l.replicas, l.leaders, humanBytes(l.bytes))
	}
	return tw.Flush()
}

// executePlan starts the plan's reassignments; a partition the controller
// refused is an error naming it.
func executePlan(ctx context.Context, adm *kadm.Client, plan balance.Plan) error {
	if len(plan.Reassignments) == 0 {
		return nil
	}
	req := kadm.AlterPartitionAssignmentsReq{}
	for _, r := range plan.Reassignments {
		req.Assign(r.Topic, r.Partition, r.Replicas)
	}
	resps, err := adm.AlterPartitionAssignments(ctx, req)
	if err != nil {
		return fmt.Errorf("alter partition reassignments: %w", describe(err))
	}
	var failed error
	resps.Each(func(r kadm.AlterPartitionAssignmentsResponse) {
		if r.Err != nil && failed == nil {
			failed = fmt.Errorf("reassign %s-%d: %w", r.Topic, r.Partition, describe(r.Err))
		}
	})
	return failed
}

// electPreferred moves the leaders of the plan's partitions to their new
// preferred replicas (ElectLeaders); a partition whose preferred replica
// already leads is fine. A preferred replica that has just joined may not
// be in sync yet (PREFERRED_LEADER_NOT_AVAILABLE): those are retried for
// up to electRetryFor.
func electPreferred(ctx context.Context, adm *kadm.Client, plan balance.Plan) error {
	set := kadm.TopicsSet{}
	for _, r := range plan.Reassignments {
		set.Add(r.Topic, r.Partition)
	}
	deadline := time.Now().Add(electRetryFor)
	for len(set) > 0 {
		res, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, set)
		if err != nil {
			return fmt.Errorf("elect preferred leaders: %w", describe(err))
		}
		retry := kadm.TopicsSet{}
		for _, ps := range res {
			for _, r := range ps {
				switch {
				case r.Err == nil || errors.Is(r.Err, kerr.ElectionNotNeeded):
				case errors.Is(r.Err, kerr.PreferredLeaderNotAvailable) && time.Now().Before(deadline):
					retry.Add(r.Topic, r.Partition)
				default:
					return fmt.Errorf("elect the preferred leader of %s-%d: %w", r.Topic, r.Partition, describe(r.Err))
				}
			}
		}
		set = retry
		if len(set) > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(500 * time.Millisecond):
			}
		}
	}
	return nil
}

// awaitPlanVisible waits until Metadata shows every reassigned partition
// with its planned replicas: brokers learn a completed move a moment after
// the controller, and a plan computed before they have would repeat it.
func awaitPlanVisible(ctx context.Context, adm *kadm.Client, plan balance.Plan, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		md, err := adm.Metadata(ctx)
		if err != nil {
			return fmt.Errorf("metadata: %w", describe(err))
		}
		stale := 0
		for _, r := range plan.Reassignments {
			p, ok := md.Topics[r.Topic].Partitions[r.Partition]
			if !ok || !slices.Equal(p.Replicas, r.Replicas) {
				stale++
			}
		}
		if stale == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("metadata still shows %d of %d moved partitions on their old replicas after %s", stale, len(plan.Reassignments), within)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// electRetryFor is how long a preferred replica may take to be in sync.
const electRetryFor = 30 * time.Second

func joinIDs(ids []int32) string {
	s := ""
	for i, id := range ids {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprint(id)
	}
	return s
}

// humanBytes prints a byte count in binary units.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
