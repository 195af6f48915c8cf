package cli

// Share groups (KIP-932) in `sluice group`: listed with their type,
// described with ShareGroupDescribe (epochs, assignor, members and their
// assignments) and DescribeShareGroupOffsets (each initialized
// partition's start offset and lag), as Kafka's kafka-share-groups shows
// them.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"text/tabwriter"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// groupTypeShare is a share group's type in ListGroups.
const groupTypeShare = "share"

// describeShareGroups asks ShareGroupDescribe about the groups. As
// describeConsumerGroups: the share groups described, and per group the
// error that is its answer; a group the API does not know
// (GROUP_ID_NOT_FOUND), and every group when the request as a whole fails
// (a broker without share groups), is in neither map.
func describeShareGroups(ctx context.Context, adm *kadm.Client, groups []string) (kadm.DescribedShareGroups, map[string]error) {
	described, err := retryCoordinator(ctx, func() (kadm.DescribedShareGroups, error) {
		return adm.DescribeShareGroups(ctx, groups...)
	}, func(ds kadm.DescribedShareGroups) bool {
		for _, d := range ds {
			if coordinatorNotReady(d.Err) {
				return true
			}
		}
		return false
	})
	found := make(kadm.DescribedShareGroups)
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

// shareGroupDescription describes a share group: its members from
// ShareGroupDescribe and its partitions' start offsets and lag.
func shareGroupDescription(ctx context.Context, adm *kadm.Client, g kadm.DescribedShareGroup) (groupDescription, error) {
	offsets, err := retryCoordinator(ctx, func() (kadm.DescribedShareGroupsOffsets, error) {
		return adm.DescribeShareGroupOffsets(ctx, g.GroupID)
	}, func(ds kadm.DescribedShareGroupsOffsets) bool { return coordinatorNotReady(ds.Error()) })
	if err == nil {
		err = offsets.Error()
	}
	if err != nil {
		return groupDescription{}, fmt.Errorf("share group offsets: %w", describe(err))
	}
	return shareDescription(g, offsets[g.GroupID]), nil
}

// shareDescription builds a share group's description from the two
// answers. A partition's start offset or lag of -1 (not known yet: no
// record acquired, or the lag needs a newer share state) is null.
func shareDescription(g kadm.DescribedShareGroup, offsets kadm.DescribedShareGroupOffsets) groupDescription {
	d := groupDescription{
		Group: g.GroupID, Type: groupTypeShare, State: g.GroupState, GroupEpoch: ptr(g.GroupEpoch),
		AssignmentEpoch: ptr(g.AssignmentEpoch), Assignor: g.Assignor, Coordinator: g.Coordinator.NodeID,
		Members: []memberDescription{}, Offsets: []offsetRow{},
	}
	for _, m := range g.Members {
		d.Members = append(d.Members, memberDescription{
			MemberID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost, MemberEpoch: ptr(m.MemberEpoch),
			Assignment: sortedTopics(m.Assignment),
		})
	}
	topics := make([]string, 0, len(offsets.Offsets))
	for t := range offsets.Offsets {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	for _, t := range topics {
		ps := make([]int32, 0, len(offsets.Offsets[t]))
		for p := range offsets.Offsets[t] {
			ps = append(ps, p)
		}
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		for _, p := range ps {
			d.Offsets = append(d.Offsets, shareRow(offsets.Offsets[t][p]))
		}
	}
	return d
}

func shareRow(o kadm.ShareOffset) offsetRow {
	row := offsetRow{Topic: o.Topic, Partition: o.Partition, LeaderEpoch: ptr(o.LeaderEpoch)}
	if o.Err != nil {
		row.Error = errorName(o.Err)
		return row
	}
	if o.StartOffset >= 0 {
		row.StartOffset = ptr(o.StartOffset)
	}
	if o.Lag >= 0 {
		row.Lag = ptr(o.Lag)
	}
	return row
}

// printShareMembers is the members table of a share group: no instance
// ids and no target assignment (a share group's members take their
// assignment whole).
func printShareMembers(out io.Writer, d groupDescription) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MEMBER-ID\tCLIENT-ID\tHOST\tMEMBER-EPOCH\tASSIGNMENT")
	for _, m := range d.Members {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", m.MemberID, orDash(m.ClientID), orDash(m.Host), *m.MemberEpoch, partitionsCell(m.Assignment))
	}
	return tw.Flush()
}

// printShareOffsets is kafka-share-groups' offsets table: per initialized
// partition, the leader epoch, the share-partition start offset and the
// lag.
func printShareOffsets(out io.Writer, d groupDescription) error {
	if len(d.Offsets) == 0 {
		_, err := fmt.Fprintln(out, "offsets: no partition initialized")
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tLEADER-EPOCH\tSTART-OFFSET\tLAG")
	for _, r := range d.Offsets {
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\t%d\t-\t%s\t-\n", r.Topic, r.Partition, r.Error)
			continue
		}
		epoch := "-"
		if r.LeaderEpoch != nil {
			epoch = strconv.Itoa(int(*r.LeaderEpoch))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", r.Topic, r.Partition, epoch, int64Cell(r.StartOffset), int64Cell(r.Lag))
	}
	return tw.Flush()
}
