package cli

import (
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

func newGroupDescribeCommand(conn *connection) *cobra.Command {
	return &cobra.Command{
		Use:   "describe GROUP...",
		Short: "Show a group's state, members (client id, host, assignments) and per partition the committed offset, log end and lag",
		Example: `  sluice group describe billing
  sluice group describe billing audit`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeGroups(conn),
		RunE: func(cmd *cobra.Command, groups []string) error {
			ctx, adm, done, err := openAdmin(cmd, conn)
			if err != nil {
				return err
			}
			defer done()
			lags, err := retryCoordinator(ctx, func() (kadm.DescribedGroupLags, error) {
				return adm.Lag(ctx, groups...)
			}, lagsNotReady)
			if err != nil {
				return fmt.Errorf("describe groups: %w", describe(err))
			}
			var failed error
			for i, g := range groups {
				if i > 0 {
					fmt.Fprintln(cmd.OutOrStdout())
				}
				if err := printGroup(cmd.OutOrStdout(), g, lags); err != nil {
					failed = errors.Join(failed, fmt.Errorf("describe group %s: %w", g, err))
				}
			}
			return failed
		},
	}
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

// printGroup prints one group: a summary, its members, and its offsets. A
// group the coordinator does not know is in state Dead (Kafka's answer);
// it is reported as not existing, as Kafka's tool does.
func printGroup(out io.Writer, group string, lags kadm.DescribedGroupLags) error {
	l, ok := lags[group]
	if !ok {
		return errors.New("no answer for this group")
	}
	if l.DescribeErr != nil {
		return describe(l.DescribeErr)
	}
	if l.State == "Dead" {
		return describe(kerr.GroupIDNotFound)
	}
	if l.FetchErr != nil {
		return fmt.Errorf("committed offsets: %w", describe(l.FetchErr))
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "GROUP\t%s\n", group)
	fmt.Fprintf(tw, "STATE\t%s\n", orDash(l.State))
	fmt.Fprintf(tw, "PROTOCOL-TYPE\t%s\n", orDash(l.ProtocolType))
	fmt.Fprintf(tw, "PROTOCOL\t%s\n", orDash(l.Protocol))
	fmt.Fprintf(tw, "COORDINATOR\t%d\n", l.Coordinator.NodeID)
	fmt.Fprintf(tw, "MEMBERS\t%d\n", len(l.Members))
	if err := tw.Flush(); err != nil {
		return err
	}

	if len(l.Members) > 0 {
		fmt.Fprintln(out)
		tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "MEMBER-ID\tINSTANCE-ID\tCLIENT-ID\tHOST\tASSIGNMENT")
		for _, m := range l.Members {
			instance := "-"
			if m.InstanceID != nil {
				instance = *m.InstanceID
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.MemberID, instance, orDash(m.ClientID), orDash(m.ClientHost), assignment(m))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}

	fmt.Fprintln(out)
	// Like Kafka's tool, show assigned partitions and committed ones; kadm
	// also lists every other partition of a committed topic, left out here.
	var rows []kadm.GroupMemberLag
	for _, r := range l.Lag.Sorted() {
		if r.Member != nil || r.Commit.At >= 0 {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		fmt.Fprintln(out, "offsets: none committed, none assigned")
		return nil
	}
	tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tCURRENT-OFFSET\tLOG-END-OFFSET\tLAG\tMEMBER-ID")
	for _, r := range rows {
		current, lag := "-", "-"
		// Kafka's tool shows no offset and no lag for a partition the
		// group never committed, rather than a lag from the log start.
		if r.Commit.At >= 0 {
			current = strconv.FormatInt(r.Commit.At, 10)
			if r.Err == nil {
				lag = strconv.FormatInt(r.Lag, 10)
			}
		}
		end := "-"
		if r.End.Err != nil {
			end = errorName(r.End.Err)
		} else if r.Err == nil || r.Commit.At < 0 {
			end = strconv.FormatInt(r.End.Offset, 10)
		}
		member := "-"
		if r.Member != nil {
			member = r.Member.MemberID
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", r.Topic, r.Partition, current, end, lag, member)
	}
	return tw.Flush()
}

// assignment prints a consumer member's partitions as topic:p,p;topic:p,
// sorted; other protocol types print their byte count.
func assignment(m kadm.DescribedGroupMember) string {
	c, ok := m.Assigned.AsConsumer()
	if !ok {
		if raw, ok := m.Assigned.Raw(); ok && len(raw) > 0 {
			return fmt.Sprintf("(%d bytes, not a consumer assignment)", len(raw))
		}
		return "-"
	}
	var topics []string
	for _, t := range c.Topics {
		if len(t.Partitions) == 0 {
			continue
		}
		ps := append([]int32(nil), t.Partitions...)
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		s := make([]string, len(ps))
		for i, p := range ps {
			s[i] = strconv.Itoa(int(p))
		}
		topics = append(topics, t.Topic+":"+strings.Join(s, ","))
	}
	if len(topics) == 0 {
		return "-"
	}
	sort.Strings(topics)
	return strings.Join(topics, ";")
}
