package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// describeOptions are the flags of group describe: at most one view, or
// --json for everything.
type describeOptions struct {
	members, offsets, state, asJSON bool
}

func newGroupDescribeCommand(conn *connection) *cobra.Command {
	o := &describeOptions{}
	cmd := &cobra.Command{
		Use: "describe GROUP...",
		Short: "Show a group's state (with epochs and assignor for a consumer group), members (client id, host, " +
			"assignments) and per partition the committed offset, log end and lag",
		Long: `Show groups of either protocol.

A consumer group (KIP-848, group.protocol=consumer) is described with ConsumerGroupDescribe:
its group epoch, assignment epoch, assignor and state, and per member its member epoch,
current assignment and target assignment. A classic group is described with DescribeGroups.
Both show the committed offset, log end offset and lag of every partition that is assigned
or committed. A share group (KIP-932) is described with ShareGroupDescribe and
DescribeShareGroupOffsets: its epochs, assignor, members with their assignments, and per
initialized partition the leader epoch, share-partition start offset and lag.
--members, --offsets and --state print one part only; --json prints all of it.`,
		Example: `  sluice group describe billing
  sluice group describe billing --members
  sluice group describe billing audit --json`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeGroups(conn),
		RunE: func(cmd *cobra.Command, groups []string) error {
			ctx, adm, done, err := openAdmin(cmd, conn)
			if err != nil {
				return err
			}
			defer done()
			descs, failed := describeGroups(ctx, adm, groups)
			if o.asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(descs); err != nil {
					return errors.Join(failed, err)
				}
				return failed
			}
			for i, d := range descs {
				if i > 0 {
					fmt.Fprintln(cmd.OutOrStdout())
				}
				if err := o.print(cmd.OutOrStdout(), d); err != nil {
					return errors.Join(failed, err)
				}
			}
			return failed
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.members, "members", false, "only the members: ids, client, host, member epoch, assigned and target partitions")
	f.BoolVar(&o.offsets, "offsets", false, "only the per-partition committed offsets, log end offsets and lag")
	f.BoolVar(&o.state, "state", false, "only the group's summary: type, state, epochs, assignor, coordinator, member count")
	f.BoolVar(&o.asJSON, "json", false, "print a JSON array of the groups (summary, members and offsets)")
	cmd.MarkFlagsMutuallyExclusive("members", "offsets", "state", "json")
	return cmd
}

// groupDescription is what describe shows of a group, also its --json shape.
// Epochs and the assignor belong to consumer groups, the protocol fields to
// classic ones.
type groupDescription struct {
	Group           string              `json:"group"`
	Type            string              `json:"type"`
	State           string              `json:"state"`
	ProtocolType    string              `json:"protocol_type,omitempty"`
	Protocol        string              `json:"protocol,omitempty"`
	GroupEpoch      *int32              `json:"group_epoch,omitempty"`
	AssignmentEpoch *int32              `json:"assignment_epoch,omitempty"`
	Assignor        string              `json:"assignor,omitempty"`
	Coordinator     int32               `json:"coordinator"`
	Members         []memberDescription `json:"members"`
	Offsets         []offsetRow         `json:"offsets"`
}

// memberDescription is one member. MemberEpoch and TargetAssignment are a
// consumer group's; a classic member whose assignment is not a consumer's
// has its size in OtherAssignmentBytes.
type memberDescription struct {
	MemberID             string            `json:"member_id"`
	InstanceID           *string           `json:"instance_id"`
	ClientID             string            `json:"client_id"`
	Host                 string            `json:"host"`
	MemberEpoch          *int32            `json:"member_epoch,omitempty"`
	Assignment           []topicPartitions `json:"assignment"`
	TargetAssignment     []topicPartitions `json:"target_assignment,omitempty"`
	OtherAssignmentBytes int               `json:"other_assignment_bytes,omitempty"`
}

type topicPartitions struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

// offsetRow is one partition of the offsets table: null offsets and lag
// are unknown (no commit, or the log end could not be listed). A share
// group's rows have the start offset and leader epoch instead of the
// committed offset and log end (group_share.go).
type offsetRow struct {
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	CurrentOffset *int64 `json:"current_offset"`
	LogEndOffset  *int64 `json:"log_end_offset"`
	LogEndError   string `json:"log_end_error,omitempty"`
	Lag           *int64 `json:"lag"`
	MemberID      string `json:"member_id,omitempty"`
	StartOffset   *int64 `json:"start_offset,omitempty"`
	LeaderEpoch   *int32 `json:"leader_epoch,omitempty"`
	Error         string `json:"error,omitempty"`
}

// describeGroups describes each group with the API of its type, in the
// order given; the groups that could not be described are left out and
// their errors joined.
func describeGroups(ctx context.Context, adm *kadm.Client, groups []string) ([]groupDescription, error) {
	consumers, consumerErrs := describeConsumerGroups(ctx, adm, groups)
	var others []string
	for _, g := range groups {
		if _, ok := consumers[g]; !ok && consumerErrs[g] == nil {
			others = append(others, g)
		}
	}
	// Neither ConsumerGroupDescribe nor DescribeGroups describes a share
	// group: ShareGroupDescribe is asked before DescribeGroups.
	shares, shareErrs := map[string]kadm.DescribedShareGroup{}, map[string]error{}
	if len(others) > 0 {
		shares, shareErrs = describeShareGroups(ctx, adm, others)
	}
	var classic []string
	for _, g := range others {
		if _, ok := shares[g]; !ok && shareErrs[g] == nil {
			classic = append(classic, g)
		}
	}
	var lags kadm.DescribedGroupLags
	if len(classic) > 0 {
		var err error
		lags, err = retryCoordinator(ctx, func() (kadm.DescribedGroupLags, error) {
			return adm.Lag(ctx, classic...)
		}, lagsNotReady)
		if err != nil {
			return nil, fmt.Errorf("describe groups: %w", describe(err))
		}
	}
	descs := []groupDescription{} // --json prints [] for none
	var failed error
	for _, g := range groups {
		var d groupDescription
		var err error
		switch cg, sg := consumers[g], shares[g]; {
		case cg.Group != "":
			d, err = consumerGroupDescription(ctx, adm, cg)
		case consumerErrs[g] != nil:
			err = consumerErrs[g]
		case sg.GroupID != "":
			d, err = shareGroupDescription(ctx, adm, sg)
		case shareErrs[g] != nil:
			err = shareErrs[g]
		default:
			d, err = classicGroupDescription(g, lags)
		}
		if err != nil {
			failed = errors.Join(failed, fmt.Errorf("describe group %s: %w", g, err))
			continue
		}
		descs = append(descs, d)
	}
	return descs, failed
}

// lagsNotReady reports whether some group's describe or offset fetch was
// refused only because its coordinator is not ready yet.
func lagsNotReady(lags kadm.DescribedGroupLags) bool {
	for _, l := range lags {
		if coordinatorNotReady(l.DescribeErr) || coordinatorNotReady(l.FetchErr) {
			return true
		}
	}
	return false
}

// classicGroupDescription describes a classic group from kadm's Lag. A
// group the coordinator does not know is in state Dead (Kafka's answer);
// it is reported as not existing, as Kafka's tool does.
func classicGroupDescription(group string, lags kadm.DescribedGroupLags) (groupDescription, error) {
	l, ok := lags[group]
	switch {
	case !ok:
		return groupDescription{}, errors.New("no answer for this group")
	case l.DescribeErr != nil:
		return groupDescription{}, describe(l.DescribeErr)
	case l.State == "Dead":
		return groupDescription{}, describe(kerr.GroupIDNotFound)
	case l.FetchErr != nil:
		return groupDescription{}, fmt.Errorf("committed offsets: %w", describe(l.FetchErr))
	}
	d := groupDescription{
		Group: group, Type: groupTypeClassic, State: l.State, ProtocolType: l.ProtocolType, Protocol: l.Protocol,
		Coordinator: l.Coordinator.NodeID, Members: []memberDescription{}, Offsets: []offsetRow{},
	}
	for _, m := range l.Members {
		md := memberDescription{MemberID: m.MemberID, InstanceID: m.InstanceID, ClientID: m.ClientID, Host: m.ClientHost,
			Assignment: []topicPartitions{}}
		if c, ok := m.Assigned.AsConsumer(); ok {
			set := make(kadm.TopicsSet)
			for _, t := range c.Topics {
				set.Add(t.Topic, t.Partitions...)
			}
			md.Assignment = sortedTopics(set)
		} else if raw, ok := m.Assigned.Raw(); ok {
			md.OtherAssignmentBytes = len(raw)
		}
		d.Members = append(d.Members, md)
	}
	// Like Kafka's tool, show assigned partitions and committed ones; kadm
	// also lists every other partition of a committed topic, left out here.
	for _, r := range l.Lag.Sorted() {
		if r.Member == nil && r.Commit.At < 0 {
			continue
		}
		row := offsetRow{Topic: r.Topic, Partition: r.Partition}
		// Kafka's tool shows no offset and no lag for a partition the
		// group never committed, rather than a lag from the log start.
		if r.Commit.At >= 0 {
			row.CurrentOffset = ptr(r.Commit.At)
			if r.Err == nil {
				row.Lag = ptr(r.Lag)
			}
		}
		if r.End.Err != nil {
			row.LogEndError = errorName(r.End.Err)
		} else if r.Err == nil || r.Commit.At < 0 {
			row.LogEndOffset = ptr(r.End.Offset)
		}
		if r.Member != nil {
			row.MemberID = r.Member.MemberID
		}
		d.Offsets = append(d.Offsets, row)
	}
	return d, nil
}

// print writes one group in the views asked for (all when none is).
func (o *describeOptions) print(out io.Writer, d groupDescription) error {
	all := !o.members && !o.offsets && !o.state
	var parts []func(io.Writer, groupDescription) error
	if all || o.state {
		parts = append(parts, printSummary)
	}
	if (all && len(d.Members) > 0) || o.members {
		parts = append(parts, printMembers)
	}
	if all || o.offsets {
		parts = append(parts, printOffsets)
	}
	for i, p := range parts {
		if i > 0 {
			fmt.Fprintln(out)
		}
		if err := p(out, d); err != nil {
			return err
		}
	}
	return nil
}

func printSummary(out io.Writer, d groupDescription) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "GROUP\t%s\n", d.Group)
	fmt.Fprintf(tw, "TYPE\t%s\n", d.Type)
	fmt.Fprintf(tw, "STATE\t%s\n", orDash(d.State))
	if d.Type == groupTypeConsumer || d.Type == groupTypeShare {
		fmt.Fprintf(tw, "GROUP-EPOCH\t%d\n", *d.GroupEpoch)
		fmt.Fprintf(tw, "ASSIGNMENT-EPOCH\t%d\n", *d.AssignmentEpoch)
		fmt.Fprintf(tw, "ASSIGNOR\t%s\n", orDash(d.Assignor))
	} else {
		fmt.Fprintf(tw, "PROTOCOL-TYPE\t%s\n", orDash(d.ProtocolType))
		fmt.Fprintf(tw, "PROTOCOL\t%s\n", orDash(d.Protocol))
	}
	fmt.Fprintf(tw, "COORDINATOR\t%d\n", d.Coordinator)
	fmt.Fprintf(tw, "MEMBERS\t%d\n", len(d.Members))
	return tw.Flush()
}

func printMembers(out io.Writer, d groupDescription) error {
	if len(d.Members) == 0 {
		_, err := fmt.Fprintf(out, "group %s has no members\n", d.Group)
		return err
	}
	if d.Type == groupTypeShare {
		return printShareMembers(out, d)
	}
	consumer := d.Type == groupTypeConsumer
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	if consumer {
		fmt.Fprintln(tw, "MEMBER-ID\tINSTANCE-ID\tCLIENT-ID\tHOST\tMEMBER-EPOCH\tASSIGNMENT\tTARGET-ASSIGNMENT")
	} else {
		fmt.Fprintln(tw, "MEMBER-ID\tINSTANCE-ID\tCLIENT-ID\tHOST\tASSIGNMENT")
	}
	for _, m := range d.Members {
		instance := "-"
		if m.InstanceID != nil {
			instance = *m.InstanceID
		}
		assigned := partitionsCell(m.Assignment)
		if m.OtherAssignmentBytes > 0 {
			assigned = fmt.Sprintf("(%d bytes, not a consumer assignment)", m.OtherAssignmentBytes)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s", m.MemberID, instance, orDash(m.ClientID), orDash(m.Host))
		if consumer {
			fmt.Fprintf(tw, "\t%d\t%s\t%s\n", *m.MemberEpoch, assigned, partitionsCell(m.TargetAssignment))
		} else {
			fmt.Fprintf(tw, "\t%s\n", assigned)
		}
	}
	return tw.Flush()
}

func printOffsets(out io.Writer, d groupDescription) error {
	if d.Type == groupTypeShare {
		return printShareOffsets(out, d)
	}
	if len(d.Offsets) == 0 {
		_, err := fmt.Fprintln(out, "offsets: none committed, none assigned")
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tCURRENT-OFFSET\tLOG-END-OFFSET\tLAG\tMEMBER-ID")
	for _, r := range d.Offsets {
		end := int64Cell(r.LogEndOffset)
		if r.LogEndError != "" {
			end = r.LogEndError
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", r.Topic, r.Partition, int64Cell(r.CurrentOffset), end,
			int64Cell(r.Lag), orDash(r.MemberID))
	}
	return tw.Flush()
}

// sortedTopics lists a topic set by topic, partitions ascending, leaving
// out topics without partitions.
func sortedTopics(set kadm.TopicsSet) []topicPartitions {
	out := []topicPartitions{}
	for _, tp := range set.Sorted() {
		if len(tp.Partitions) == 0 {
			continue
		}
		ps := append([]int32(nil), tp.Partitions...)
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		out = append(out, topicPartitions{Topic: tp.Topic, Partitions: ps})
	}
	return out
}

// partitionsCell prints partitions as topic:p,p;topic:p, or "-" for none.
func partitionsCell(tps []topicPartitions) string {
	if len(tps) == 0 {
		return "-"
	}
	topics := make([]string, 0, len(tps))
	for _, t := range tps {
		s := make([]string, len(t.Partitions))
		for i, p := range t.Partitions {
			s[i] = strconv.Itoa(int(p))
		}
		topics = append(topics, t.Topic+":"+strings.Join(s, ","))
	}
	return strings.Join(topics, ";")
}

func int64Cell(v *int64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatInt(*v, 10)
}

func ptr[T any](v T) *T { return &v }
