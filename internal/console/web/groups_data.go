package web

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// maxListedGroups bounds the groups the list page describes (one
// DescribeGroups and one ConsumerGroupDescribe per coordinator).
const maxListedGroups = 1000

// groupRow is one line of the groups list.
type groupRow struct {
	Name, Type, State, ProtocolType, Protocol string
	Path                                      string // the group's page
	Coordinator                               int32
	Members                                   int // -1: not described
}

// listGroups lists every group (ListGroups with its types) and describes
// at most maxListedGroups of them for their member counts and assignors.
func listGroups(ctx context.Context, adm *kadm.Client) (rows []groupRow, note string, err error) {
	listed, err := adm.ListGroups(ctx)
	if err != nil && len(listed) == 0 {
		return nil, "", fmt.Errorf("listing groups: %w", err)
	}
	if err != nil {
		note = "Some brokers did not answer ListGroups: " + err.Error()
	}
	all := listed.Sorted()
	if len(all) > maxListedGroups {
		note = strings.TrimSpace(note + fmt.Sprintf(" Showing the first %d of %d groups.", maxListedGroups, len(all)))
		all = all[:maxListedGroups]
	}
	var classic, consumer []string
	for _, g := range all {
		if g.GroupType == "consumer" {
			consumer = append(consumer, g.Group)
		} else if g.GroupType == "" || g.GroupType == "classic" {
			classic = append(classic, g.Group)
		}
	}
	described := describeAll(ctx, adm, classic, consumer)
	for _, g := range all {
		row := groupRow{Name: g.Group, Path: groupPath(g.Group), Type: g.GroupType, State: g.State, ProtocolType: g.ProtocolType, Coordinator: g.Coordinator, Members: -1}
		if d, ok := described[g.Group]; ok {
			row.Members, row.Protocol = d.Members, d.Protocol
		}
		rows = append(rows, row)
	}
	return rows, note, nil
}

type describedSummary struct {
	Members  int
	Protocol string
}

// describeAll describes classic and consumer groups; groups whose describe
// fails keep no summary (the list shows "?").
func describeAll(ctx context.Context, adm *kadm.Client, classic, consumer []string) map[string]describedSummary {
	out := make(map[string]describedSummary)
	if len(classic) > 0 {
		ds, _ := adm.DescribeGroups(ctx, classic...)
		for _, d := range ds {
			if d.Err == nil {
				out[d.Group] = describedSummary{Members: len(d.Members), Protocol: d.Protocol}
			}
		}
	}
	if len(consumer) > 0 {
		ds, _ := adm.DescribeConsumerGroups(ctx, consumer...)
		for _, d := range ds {
			if d.Err == nil {
				out[d.Group] = describedSummary{Members: len(d.Members), Protocol: d.AssignorName}
			}
		}
	}
	return out
}

// groupMember is a member as the group page shows it.
type groupMember struct {
	MemberID, InstanceID, ClientID, Host string
	Assigned                             string // "topic: 0,1,2; other: 3"
}

// partitionLag is one partition's committed offset, end offset and lag.
type partitionLag struct {
	Topic     string
	Partition int32
	Committed int64 // -1: no committed offset
	End       int64 // -1: unknown
	Lag       int64 // -1: unknown
	Member    string
	OffsetErr string
	EndErr    string
}

// groupDetail is a group's page.
type groupDetail struct {
	Name, Type, State, ProtocolType, Protocol string
	Path                                      string // the group's page
	Coordinator                               int32
	Epoch                                     int32 // consumer groups: the group epoch
	Members                                   []groupMember
	Partitions                                []partitionLag
	TotalLag                                  int64
}

// errNoGroup is a group the cluster does not know.
var errNoGroup = errors.New("no such group")

// describeGroup finds the group's type in ListGroups and describes it with
// the matching API, then adds its committed offsets and lag.
func describeGroup(ctx context.Context, adm *kadm.Client, name string) (groupDetail, error) {
	listed, err := adm.ListGroups(ctx)
	if err != nil && len(listed) == 0 {
		return groupDetail{}, fmt.Errorf("listing groups: %w", err)
	}
	lg, ok := listed[name]
	if !ok {
		return groupDetail{}, errNoGroup
	}
	d := groupDetail{Name: name, Path: groupPath(name), Type: lg.GroupType, State: lg.State, ProtocolType: lg.ProtocolType, Coordinator: lg.Coordinator}
	owners := make(map[string]map[int32]string)
	if lg.GroupType == "consumer" {
		err = d.describeConsumer(ctx, adm, owners)
	} else {
		err = d.describeClassic(ctx, adm, owners)
	}
	if err != nil {
		return d, err
	}
	return d, d.addLag(ctx, adm, owners)
}

func (d *groupDetail) describeClassic(ctx context.Context, adm *kadm.Client, owners map[string]map[int32]string) error {
	ds, err := adm.DescribeGroups(ctx, d.Name)
	if err != nil {
		return fmt.Errorf("describing group %s: %w", d.Name, err)
	}
	g := ds[d.Name]
	if g.Err != nil {
		return fmt.Errorf("describing group %s: %w", d.Name, kafkaErr(g.Err, g.ErrMessage))
	}
	d.State, d.Protocol, d.ProtocolType = g.State, g.Protocol, g.ProtocolType
	for _, m := range g.Members {
		gm := groupMember{MemberID: m.MemberID, InstanceID: deref(m.InstanceID), ClientID: m.ClientID, Host: m.ClientHost}
		if a, ok := m.Assigned.AsConsumer(); ok {
			set := make(kadm.TopicsSet)
			for _, t := range a.Topics {
				set.Add(t.Topic, t.Partitions...)
			}
			gm.Assigned = assignedText(set, owners, m.MemberID)
		}
		d.Members = append(d.Members, gm)
	}
	return nil
}

func (d *groupDetail) describeConsumer(ctx context.Context, adm *kadm.Client, owners map[string]map[int32]string) error {
	ds, err := adm.DescribeConsumerGroups(ctx, d.Name)
	if err != nil {
		return fmt.Errorf("describing consumer group %s: %w", d.Name, err)
	}
	g := ds[d.Name]
	if g.Err != nil {
		return fmt.Errorf("describing consumer group %s: %w", d.Name, g.Err)
	}
	d.State, d.Protocol, d.Epoch = g.State, g.AssignorName, g.Epoch
	for _, m := range g.Members {
		gm := groupMember{MemberID: m.MemberID, InstanceID: deref(m.InstanceID), ClientID: m.ClientID, Host: m.ClientHost}
		gm.Assigned = assignedText(m.Assignment, owners, m.MemberID)
		d.Members = append(d.Members, gm)
	}
	return nil
}

// assignedText renders a member's partitions and records their owner.
func assignedText(set kadm.TopicsSet, owners map[string]map[int32]string, member string) string {
	var parts []string
	for _, t := range set.Sorted() {
		if owners[t.Topic] == nil {
			owners[t.Topic] = make(map[int32]string)
		}
		for _, p := range t.Partitions {
			owners[t.Topic][p] = member
		}
		parts = append(parts, t.Topic+": "+joinInt32s(t.Partitions))
	}
	return strings.Join(parts, "; ")
}

// addLag lists the committed offsets and the end offsets of every topic
// the group committed to or is assigned, and computes the lag as Kafka's
// tools do: end offset minus committed offset, unknown without a commit.
func (d *groupDetail) addLag(ctx context.Context, adm *kadm.Client, owners map[string]map[int32]string) error {
	committed, err := adm.FetchOffsets(ctx, d.Name)
	if err != nil {
		return fmt.Errorf("fetching committed offsets of %s: %w", d.Name, err)
	}
	rows := make(map[string]map[int32]*partitionLag)
	row := func(t string, p int32) *partitionLag {
		if rows[t] == nil {
			rows[t] = make(map[int32]*partitionLag)
		}
		if rows[t][p] == nil {
			rows[t][p] = &partitionLag{Topic: t, Partition: p, Committed: -1, End: -1, Lag: -1, Member: owners[t][p]}
		}
		return rows[t][p]
	}
	committed.Each(func(o kadm.OffsetResponse) {
		r := row(o.Topic, o.Partition)
		r.Committed = o.At
		if o.Err != nil {
			r.OffsetErr = o.Err.Error()
		}
	})
	for t, ps := range owners {
		for p := range ps {
			row(t, p)
		}
	}
	topics := make([]string, 0, len(rows))
	for t := range rows {
		topics = append(topics, t)
	}
	if len(topics) > 0 {
		ends, err := adm.ListEndOffsets(ctx, topics...)
		if err != nil && len(ends) == 0 {
			return fmt.Errorf("listing end offsets: %w", err)
		}
		d.fillEnds(rows, ends)
	}
	d.sortPartitions(rows)
	return nil
}

func (d *groupDetail) fillEnds(rows map[string]map[int32]*partitionLag, ends kadm.ListedOffsets) {
	for t, ps := range rows {
		for p, r := range ps {
			e, ok := ends.Lookup(t, p)
			switch {
			case !ok:
				r.EndErr = "no end offset (topic deleted?)"
			case e.Err != nil:
				r.EndErr = e.Err.Error()
			default:
				r.End = e.Offset
				if r.Committed >= 0 {
					r.Lag = max(e.Offset-r.Committed, 0)
					d.TotalLag += r.Lag
				}
			}
		}
	}
}

func (d *groupDetail) sortPartitions(rows map[string]map[int32]*partitionLag) {
	for _, ps := range rows {
		for _, r := range ps {
			d.Partitions = append(d.Partitions, *r)
		}
	}
	sort.Slice(d.Partitions, func(i, j int) bool {
		a, b := d.Partitions[i], d.Partitions[j]
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})
}

// kafkaErr joins a Kafka error with the broker's message when it sent one.
func kafkaErr(err error, msg string) error {
	if msg == "" {
		return err
	}
	return fmt.Errorf("%w (%s)", err, msg)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// isUnknownGroup reports the answers that mean the group does not exist.
func isUnknownGroup(err error) bool {
	return errors.Is(err, errNoGroup) || errors.Is(err, kerr.GroupIDNotFound)
}

// groupPath is a group's page: a group name may hold any character, "/"
// and "?" included, so it is escaped as one path segment.
func groupPath(group string) string { return "/groups/" + url.PathEscape(group) }
