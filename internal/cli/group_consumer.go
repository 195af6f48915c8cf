package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// describeConsumerGroups asks ConsumerGroupDescribe (KIP-848) about the
// groups. It returns the consumer groups described, and per group the
// error that is the group's answer (TOPIC_AUTHORIZATION_FAILED, say). A
// group the API does not know (GROUP_ID_NOT_FOUND: a classic group, or
// none) is in neither map and is for DescribeGroups to describe; so is
// every group when the request as a whole fails (a broker without the API,
// or a refusal DescribeGroups will report as well).
func describeConsumerGroups(ctx context.Context, adm *kadm.Client, groups []string) (kadm.DescribedConsumerGroups, map[string]error) {
	described, err := retryCoordinator(ctx, func() (kadm.DescribedConsumerGroups, error) {
		return adm.DescribeConsumerGroups(ctx, groups...)
	}, func(ds kadm.DescribedConsumerGroups) bool {
		for _, d := range ds {
			if coordinatorNotReady(d.Err) {
				return true
			}
		}
		return false
	})
	found := make(kadm.DescribedConsumerGroups)
	errs := make(map[string]error)
	if err != nil && len(described) == 0 {
		return found, errs
	}
	for name, d := range described {
		switch {
		case d.Err == nil:
			found[name] = d
		case !errors.Is(d.Err, kerr.GroupIDNotFound):
			errs[name] = describe(d.Err)
		}
	}
	return found, errs
}

// consumerGroupDescription describes a consumer group: its epochs and
// members from ConsumerGroupDescribe, and per assigned or committed
// partition the committed offset, log end and lag.
func consumerGroupDescription(ctx context.Context, adm *kadm.Client, g kadm.DescribedConsumerGroup) (groupDescription, error) {
	d := groupDescription{
		Group: g.Group, Type: groupTypeConsumer, State: g.State, GroupEpoch: ptr(g.Epoch),
		AssignmentEpoch: ptr(g.AssignmentEpoch), Assignor: g.AssignorName, Coordinator: g.Coordinator.NodeID,
		Members: []memberDescription{},
	}
	owner := make(map[string]map[int32]string) // topic -> partition -> member id
	for _, m := range g.Members {
		d.Members = append(d.Members, memberDescription{
			MemberID: m.MemberID, InstanceID: m.InstanceID, ClientID: m.ClientID, Host: m.ClientHost,
			MemberEpoch: ptr(m.MemberEpoch), Assignment: sortedTopics(m.Assignment),
			TargetAssignment: sortedTopics(m.TargetAssignment),
		})
		for t, ps := range m.Assignment {
			if owner[t] == nil {
				owner[t] = make(map[int32]string)
			}
			for p := range ps {
				owner[t][p] = m.MemberID
			}
		}
	}
	rows, err := consumerOffsetRows(ctx, adm, g.Group, owner)
	if err != nil {
		return groupDescription{}, err
	}
	d.Offsets = rows
	return d, nil
}

// consumerOffsetRows is the offsets table of a consumer group: every
// assigned partition (with its owner) and every committed one, as the
// classic path shows them.
func consumerOffsetRows(ctx context.Context, adm *kadm.Client, group string, owner map[string]map[int32]string) ([]offsetRow, error) {
	committed, err := retryCoordinator(ctx, func() (kadm.OffsetResponses, error) {
		return adm.FetchOffsets(ctx, group)
	}, func(r kadm.OffsetResponses) bool { return coordinatorNotReady(r.Error()) })
	if err == nil {
		err = committed.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("committed offsets: %w", describe(err))
	}
	set := make(kadm.TopicsSet)
	for t, ps := range owner {
		for p := range ps {
			set.Add(t, p)
		}
	}
	committed.Each(func(r kadm.OffsetResponse) {
		if r.At >= 0 {
			set.Add(r.Topic, r.Partition)
		}
	})
	rows := []offsetRow{}
	if len(set) == 0 {
		return rows, nil
	}
	ends, err := adm.ListEndOffsets(ctx, set.Topics()...)
	if err != nil && len(ends) == 0 {
		return nil, fmt.Errorf("log end offsets: %w", describe(err))
	}
	for _, tp := range set.Sorted() {
		for _, p := range tp.Partitions {
			row := offsetRow{Topic: tp.Topic, Partition: p, MemberID: owner[tp.Topic][p]}
			end, endErr := listed(ends, tp.Topic, p)
			if endErr != nil {
				row.LogEndError = errorName(endErr)
			} else {
				row.LogEndOffset = ptr(end)
			}
			if c, ok := committed.Lookup(tp.Topic, p); ok && c.Err == nil && c.At >= 0 {
				row.CurrentOffset = ptr(c.At)
				if endErr == nil {
					row.Lag = ptr(max(0, end-c.At))
				}
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}
