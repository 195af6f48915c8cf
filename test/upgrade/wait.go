package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// waitFor polls cond every 200 ms until it returns nil or the timeout
// passes; the error then names what was last unmet.
func waitFor(ctx context.Context, timeout time.Duration, what string, cond func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := cond(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: not within %s: %w", what, timeout, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// inAllISRs checks, in the metadata each live node answers, that every
// partition of every topic has a leader and that node id is in the ISR of
// each partition it is a replica of; with id -1, that every ISR is complete.
func inAllISRs(admin *kgo.Client, nodes []*node, id int32) func(context.Context) error {
	return func(ctx context.Context) error {
		for _, n := range nodes {
			if err := isrOf(ctx, admin, n.id, id); err != nil {
				return fmt.Errorf("node %d's metadata: %w", n.id, err)
			}
		}
		return nil
	}
}

func isrOf(ctx context.Context, admin *kgo.Client, ask, id int32) error {
	req := kmsg.NewPtrMetadataRequest() // nil Topics: all of them
	resp, err := req.RequestWith(ctx, admin.Broker(int(ask)))
	if err != nil {
		return err
	}
	var missing []string
	for _, t := range resp.Topics {
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return fmt.Errorf("topic %s: %w", *t.Topic, err)
		}
		for _, p := range t.Partitions {
			name := fmt.Sprintf("%s-%d", *t.Topic, p.Partition)
			if p.Leader < 0 {
				missing = append(missing, name+" has no leader")
				continue
			}
			if lacks(p.Replicas, p.ISR, id) {
				missing = append(missing, fmt.Sprintf("%s isr %v of replicas %v", name, p.ISR, p.Replicas))
			}
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("%d partitions short: %s", len(missing), strings.Join(first(missing, 3), "; "))
	}
	return nil
}

// lacks reports whether the ISR misses id (or, for id -1, any replica).
func lacks(replicas, isr []int32, id int32) bool {
	if id < 0 {
		return len(isr) < len(replicas)
	}
	return slices.Contains(replicas, id) && !slices.Contains(isr, id)
}

func first(s []string, n int) []string { return s[:min(n, len(s))] }

// voterCaughtUp checks with DescribeQuorum that voter id has the metadata
// log up to the quorum's high watermark, as the leader sees it.
func voterCaughtUp(admin *kgo.Client, id int32) func(context.Context) error {
	return func(ctx context.Context) error {
		p, err := describeQuorum(ctx, admin)
		if err != nil {
			return err
		}
		if p.LeaderID < 0 {
			return errors.New("the quorum has no leader")
		}
		for _, v := range p.CurrentVoters {
			if v.ReplicaID != id {
				continue
			}
			if v.LogEndOffset < p.HighWatermark {
				return fmt.Errorf("voter %d at %d, high watermark %d (leader %d)", id, v.LogEndOffset, p.HighWatermark, p.LeaderID)
			}
			return nil
		}
		return fmt.Errorf("voter %d not among the current voters", id)
	}
}

func describeQuorum(ctx context.Context, admin *kgo.Client) (*kmsg.DescribeQuorumResponseTopicPartition, error) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, admin)
	if err != nil {
		return nil, fmt.Errorf("DescribeQuorum: %w", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, fmt.Errorf("DescribeQuorum: %w", err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return nil, errors.New("DescribeQuorum: no __cluster_metadata-0 in the answer")
	}
	p := &resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return nil, fmt.Errorf("DescribeQuorum: %w", err)
	}
	return p, nil
}

// finalizedFeatures returns the finalized feature levels a node reports
// in ApiVersions, as "name=level" sorted.
func finalizedFeatures(ctx context.Context, admin *kgo.Client, id int32) ([]string, error) {
	req := kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName, req.ClientSoftwareVersion = "sluice-upgrade-test", "1"
	resp, err := req.RequestWith(ctx, admin.Broker(int(id)))
	if err != nil {
		return nil, fmt.Errorf("node %d ApiVersions: %w", id, err)
	}
	var out []string
	for _, f := range resp.FinalizedFeatures {
		out = append(out, fmt.Sprintf("%s=%d", f.Name, f.MaxVersionLevel))
	}
	sort.Strings(out)
	return out, nil
}
