package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

func newGroupCommand() *cobra.Command {
	conn := &connection{}
	cmd := &cobra.Command{
		Use:   "group",
		Short: "List, describe, delete consumer groups (classic and KIP-848) and share groups (KIP-932), and reset committed offsets",
		Example: `  sluice group list
  sluice group list --type consumer
  sluice group list --type share
  sluice group describe billing
  sluice group describe billing --members
  sluice group reset-offsets billing --topic orders --to-earliest            # prints the plan
  sluice group reset-offsets billing --topic orders --to-earliest --execute  # applies it
  sluice group delete billing`,
	}
	addConnectionFlags(cmd, conn)
	cmd.AddCommand(
		newGroupListCommand(conn),
		newGroupDescribeCommand(conn),
		newGroupDeleteCommand(conn),
		newGroupResetOffsetsCommand(conn),
	)
	return cmd
}

func newGroupListCommand(conn *connection) *cobra.Command {
	var states, types []string
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List groups with their type, state, protocol type and member count",
		Example: `  sluice group list
  sluice group list --state Stable --state Empty
  sluice group list --type consumer`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			types, err := groupTypes(types)
			if err != nil {
				return err
			}
			ctx, adm, done, err := openAdmin(cmd, conn)
			if err != nil {
				return err
			}
			defer done()
			listed, err := adm.ListGroupsByType(ctx, types, states...)
			if err != nil {
				return fmt.Errorf("list groups: %w", describe(err))
			}
			names := listed.Groups()
			members, err := memberCounts(ctx, adm, listed)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "GROUP\tTYPE\tSTATE\tPROTOCOL-TYPE\tMEMBERS")
			for _, name := range names {
				g := listed[name]
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", name, orDash(g.GroupType), orDash(g.State), orDash(g.ProtocolType), members[name])
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringArrayVar(&states, "state", nil, "only groups in this state (classic: Empty, Stable, PreparingRebalance, CompletingRebalance, Dead; "+
		"consumer: Empty, Assigning, Reconciling, Stable; share: Empty, Stable; repeatable)")
	cmd.Flags().StringSliceVar(&types, "type", nil, "only groups of this type: consumer (KIP-848), classic or share (KIP-932) (repeatable or comma-separated)")
	return cmd
}

// groupTypes checks --type values and spells them as ListGroups expects.
func groupTypes(given []string) ([]string, error) {
	var out []string
	for _, t := range given {
		switch lower := strings.ToLower(strings.TrimSpace(t)); lower {
		case groupTypeClassic, groupTypeConsumer, groupTypeShare:
			out = append(out, lower)
		default:
			return nil, fmt.Errorf("--type %q: want consumer, classic or share", t)
		}
	}
	return out, nil
}

// Group types as ListGroups (v5+) reports them.
const (
	groupTypeClassic  = "classic"
	groupTypeConsumer = "consumer"
)

// memberCounts describes the groups to count their members: ListGroups does
// not carry them. Consumer groups are described with ConsumerGroupDescribe
// (DescribeGroups does not know them), the others with DescribeGroups. A
// group that cannot be described shows its error name.
func memberCounts(ctx context.Context, adm *kadm.Client, listed kadm.ListedGroups) (map[string]string, error) {
	counts := make(map[string]string, len(listed))
	var classic, consumer, share []string
	for name, g := range listed {
		switch g.GroupType {
		case groupTypeConsumer:
			consumer = append(consumer, name)
		case groupTypeShare:
			share = append(share, name)
		default:
			classic = append(classic, name)
		}
	}
	if len(share) > 0 {
		described, err := adm.DescribeShareGroups(ctx, share...)
		if err != nil && len(described) == 0 {
			return nil, fmt.Errorf("describe share groups: %w", describe(err))
		}
		for _, name := range share {
			d, ok := described[name]
			counts[name] = countCell(ok, d.Err, len(d.Members))
		}
	}
	if len(classic) > 0 {
		described, err := adm.DescribeGroups(ctx, classic...)
		if err != nil && len(described) == 0 {
			return nil, fmt.Errorf("describe groups: %w", describe(err))
		}
		for _, name := range classic {
			d, ok := described[name]
			counts[name] = countCell(ok, d.Err, len(d.Members))
		}
	}
	if len(consumer) > 0 {
		described, err := adm.DescribeConsumerGroups(ctx, consumer...)
		if err != nil && len(described) == 0 {
			return nil, fmt.Errorf("describe consumer groups: %w", describe(err))
		}
		for _, name := range consumer {
			d, ok := described[name]
			counts[name] = countCell(ok, d.Err, len(d.Members))
		}
	}
	return counts, nil
}

// countCell is a MEMBERS cell: the count, the error's name, or "?" when
// the group had no answer.
func countCell(answered bool, err error, members int) string {
	switch {
	case !answered:
		return "?"
	case err != nil:
		return errorName(err)
	default:
		return fmt.Sprint(members)
	}
}

func newGroupDeleteCommand(conn *connection) *cobra.Command {
	return &cobra.Command{
		Use:               "delete GROUP...",
		Short:             "Delete groups and their committed offsets or share state (the groups must have no members)",
		Example:           `  sluice group delete billing audit`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeGroups(conn),
		RunE: func(cmd *cobra.Command, groups []string) error {
			ctx, adm, done, err := openAdmin(cmd, conn)
			if err != nil {
				return err
			}
			defer done()
			resp, err := deleteGroups(ctx, adm, groups)
			if err != nil && len(resp) == 0 {
				return fmt.Errorf("delete groups: %w", describe(err))
			}
			var failed error
			for _, g := range groups {
				r, ok := resp[g]
				switch {
				case !ok:
					failed = errors.Join(failed, fmt.Errorf("delete group %s: no answer for this group", g))
				case r.Err != nil:
					failed = errors.Join(failed, fmt.Errorf("delete group %s: %w", g, describe(r.Err)))
				default:
					fmt.Fprintf(cmd.OutOrStdout(), "deleted group %s\n", g)
				}
			}
			return failed
		},
	}
}

// deleteGroups deletes the groups, asking again (within ctx) for those whose
// coordinator was not ready. Only those are asked again: a group deleted by
// an earlier attempt would now answer GROUP_ID_NOT_FOUND.
func deleteGroups(ctx context.Context, adm *kadm.Client, groups []string) (kadm.DeleteGroupResponses, error) {
	results := make(kadm.DeleteGroupResponses, len(groups))
	pending := groups
	return retryCoordinator(ctx, func() (kadm.DeleteGroupResponses, error) {
		resp, err := adm.DeleteGroups(ctx, pending...)
		var again []string
		for _, g := range pending {
			r, ok := resp[g]
			if ok {
				results[g] = r
			}
			// A group with no answer was on a shard whose request failed.
			if (ok && coordinatorNotReady(r.Err)) || (!ok && coordinatorNotReady(err)) {
				again = append(again, g)
			}
		}
		pending = again
		return results, err
	}, func(kadm.DeleteGroupResponses) bool { return len(pending) > 0 })
}

// completeGroups completes group names by asking the cluster, within a short
// timeout; nothing is offered when it cannot be reached.
func completeGroups(conn *connection) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		quick := *conn
		quick.timeout = min(conn.timeout, 3*time.Second)
		ctx, adm, done, err := openAdmin(cmd, &quick)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer done()
		listed, err := adm.ListGroups(ctx)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []string
		for _, g := range listed.Groups() {
			if strings.HasPrefix(g, prefix) {
				names = append(names, g)
			}
		}
		sort.Strings(names)
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// orDash prints an empty cell as "-".
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
