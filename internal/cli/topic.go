package cli

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

func newTopicCommand() *cobra.Command {
	conn := &connection{}
	cmd := &cobra.Command{
		Use:   "topic",
		Short: "Create, list, describe, delete topics and alter their configs",
		Example: `  sluice topic create orders -p 6 -r 1 -c retention.ms=86400000
  sluice topic list
  sluice topic describe orders
  sluice topic alter-config orders -c cleanup.policy=compact --delete retention.ms
  sluice topic delete orders`,
	}
	addConnectionFlags(cmd, conn)
	cmd.AddCommand(
		newTopicCreateCommand(conn),
		newTopicListCommand(conn),
		newTopicDescribeCommand(conn),
		newTopicDeleteCommand(conn),
		newTopicAlterConfigCommand(conn),
		newTopicReassignCommand(conn),
	)
	return cmd
}

func newTopicCreateCommand(conn *connection) *cobra.Command {
	var partitions int32
	var replication int16
	var configs []string
	cmd := &cobra.Command{
		Use:   "create TOPIC...",
		Short: "Create topics (partitions and replication factor default to the broker's)",
		Example: `  sluice topic create events
  sluice topic create orders --partitions 6 --replication-factor 3 -c min.insync.replicas=2`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, topics []string) error {
			cfg := make(map[string]*string, len(configs))
			for _, c := range configs {
				k, v, err := splitKeyValue("-c", c)
				if err != nil {
					return err
				}
				cfg[k] = &v
			}
			ctx, adm, done, err := openAdmin(cmd, conn)
			if err != nil {
				return err
			}
			defer done()
			resp, err := adm.CreateTopics(ctx, partitions, replication, cfg, topics...)
			if err != nil {
				return fmt.Errorf("create topics: %w", describe(err))
			}
			var failed error
			for _, t := range topics {
				r, ok := resp[t]
				switch {
				case !ok:
					failed = errors.Join(failed, fmt.Errorf("create %s: no answer for this topic", t))
				case r.Err != nil:
					failed = errors.Join(failed, fmt.Errorf("create %s: %w", t, serverError(r.Err, r.ErrMessage)))
				default:
					fmt.Fprintf(cmd.OutOrStdout(), "created %s: %d partitions, replication factor %d\n",
						t, r.NumPartitions, r.ReplicationFactor)
				}
			}
			return failed
		},
	}
	cmd.Flags().Int32VarP(&partitions, "partitions", "p", -1, "number of partitions (-1: the broker's num.partitions)")
	cmd.Flags().Int16VarP(&replication, "replication-factor", "r", -1, "replicas per partition (-1: the broker's default.replication.factor)")
	cmd.Flags().StringArrayVarP(&configs, "config", "c", nil, "topic config key=value (repeatable)")
	return cmd
}

func newTopicListCommand(conn *connection) *cobra.Command {
	var internal bool
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List topics with their partition count and replication factor",
		Example: `  sluice topic list
  sluice topic list --internal`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, adm, done, err := openAdmin(cmd, conn)
			if err != nil {
				return err
			}
			defer done()
			list := adm.ListTopics
			if internal {
				list = adm.ListTopicsWithInternal
			}
			topics, err := list(ctx)
			if err != nil {
				return fmt.Errorf("list topics: %w", describe(err))
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TOPIC\tPARTITIONS\tREPLICAS")
			for _, t := range topics.Sorted() {
				if t.Err != nil {
					fmt.Fprintf(tw, "%s\t-\t-\t%v\n", t.Topic, describe(t.Err))
					continue
				}
				fmt.Fprintf(tw, "%s\t%d\t%d\n", t.Topic, len(t.Partitions), t.Partitions.NumReplicas())
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&internal, "internal", false, "include internal topics (__consumer_offsets, ...)")
	return cmd
}

func newTopicDeleteCommand(conn *connection) *cobra.Command {
	return &cobra.Command{
		Use:               "delete TOPIC...",
		Short:             "Delete topics",
		Example:           `  sluice topic delete orders events`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeTopics(conn, false),
		RunE: func(cmd *cobra.Command, topics []string) error {
			ctx, adm, done, err := openAdmin(cmd, conn)
			if err != nil {
				return err
			}
			defer done()
			resp, err := adm.DeleteTopics(ctx, topics...)
			if err != nil {
				return fmt.Errorf("delete topics: %w", describe(err))
			}
			var failed error
			for _, t := range topics {
				r, ok := resp[t]
				switch {
				case !ok:
					failed = errors.Join(failed, fmt.Errorf("delete %s: no answer for this topic", t))
				case r.Err != nil:
					failed = errors.Join(failed, fmt.Errorf("delete %s: %w", t, serverError(r.Err, r.ErrMessage)))
				default:
					fmt.Fprintf(cmd.OutOrStdout(), "deleted %s\n", t)
				}
			}
			return failed
		},
	}
}

func newTopicAlterConfigCommand(conn *connection) *cobra.Command {
	var sets, deletes []string
	cmd := &cobra.Command{
		Use:   "alter-config TOPIC...",
		Short: "Set or delete topic configs (incremental: other configs stay as they are)",
		Example: `  sluice topic alter-config orders -c retention.ms=3600000 -c cleanup.policy=compact
  sluice topic alter-config orders --delete retention.ms`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeTopics(conn, false),
		RunE: func(cmd *cobra.Command, topics []string) error {
			alters, err := alterations(sets, deletes)
			if err != nil {
				return err
			}
			ctx, adm, done, err := openAdmin(cmd, conn)
			if err != nil {
				return err
			}
			defer done()
			resp, err := adm.AlterTopicConfigs(ctx, alters, topics...)
			if err != nil {
				return fmt.Errorf("alter topic configs: %w", describe(err))
			}
			return reportAlterations(cmd.OutOrStdout(), "topic", resp)
		},
	}
	cmd.Flags().StringArrayVarP(&sets, "config", "c", nil, "config key=value to set (repeatable)")
	cmd.Flags().StringArrayVar(&deletes, "delete", nil, "config key to delete, back to its default (repeatable)")
	return cmd
}

// alterations turns --config key=value and --delete key flags into an
// incremental alteration list.
func alterations(sets, deletes []string) ([]kadm.AlterConfig, error) {
	if len(sets)+len(deletes) == 0 {
		return nil, errors.New("nothing to alter: give -c key=value or --delete key")
	}
	var out []kadm.AlterConfig
	for _, s := range sets {
		k, v, err := splitKeyValue("-c", s)
		if err != nil {
			return nil, err
		}
		out = append(out, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: &v})
	}
	for _, d := range deletes {
		if d = strings.TrimSpace(d); d == "" {
			return nil, errors.New("--delete: empty config key")
		}
		out = append(out, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: d})
	}
	return out, nil
}

// reportAlterations prints one line per altered resource and joins the
// per-resource errors.
func reportAlterations(out io.Writer, kind string, resp kadm.AlterConfigsResponses) error {
	sort.Slice(resp, func(i, j int) bool { return resp[i].Name < resp[j].Name })
	var failed error
	for _, r := range resp {
		name := r.Name
		if name == "" {
			name = "(cluster-wide default)"
		}
		if r.Err != nil {
			failed = errors.Join(failed, fmt.Errorf("alter %s %s: %w", kind, name, serverError(r.Err, r.ErrMessage)))
			continue
		}
		fmt.Fprintf(out, "altered %s %s\n", kind, name)
	}
	return failed
}
