package cli

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func newTopicDescribeCommand(conn *connection) *cobra.Command {
	var allConfigs bool
	cmd := &cobra.Command{
		Use:   "describe TOPIC...",
		Short: "Show a topic's partitions (leader, replicas, ISR, offsets) and its non-default configs",
		Example: `  sluice topic describe orders
  sluice topic describe orders --all-configs`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeTopics(conn, false),
		RunE: func(cmd *cobra.Command, topics []string) error {
			ctx, adm, done, err := openAdmin(cmd, conn)
			if err != nil {
				return err
			}
			defer done()
			var failed error
			for i, t := range topics {
				if i > 0 {
					fmt.Fprintln(cmd.OutOrStdout())
				}
				if err := describeTopic(ctx, cmd.OutOrStdout(), adm, t, allConfigs); err != nil {
					failed = errors.Join(failed, fmt.Errorf("describe %s: %w", t, err))
				}
			}
			return failed
		},
	}
	cmd.Flags().BoolVar(&allConfigs, "all-configs", false, "show every config, defaults included")
	return cmd
}

// describeTopic prints one topic: a summary, its configs, then a row per
// partition with the log start offset and the high watermark.
func describeTopic(ctx context.Context, out io.Writer, adm *kadm.Client, topic string, allConfigs bool) error {
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return describe(err)
	}
	td, ok := md.Topics[topic]
	if !ok {
		return errors.New("no metadata for this topic")
	}
	if td.Err != nil {
		return describe(td.Err)
	}
	configs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		return fmt.Errorf("configs: %w", describe(err))
	}
	rc, err := configs.On(topic, nil)
	if err != nil {
		return fmt.Errorf("configs: %w", describe(err))
	}
	if rc.Err != nil {
		return fmt.Errorf("configs: %w", serverError(rc.Err, rc.ErrMessage))
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return fmt.Errorf("start offsets: %w", describe(err))
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return fmt.Errorf("end offsets: %w", describe(err))
	}

	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "TOPIC\t%s\n", td.Topic)
	fmt.Fprintf(tw, "ID\t%s\n", base64.RawURLEncoding.EncodeToString(td.ID[:]))
	fmt.Fprintf(tw, "PARTITIONS\t%d\n", len(td.Partitions))
	fmt.Fprintf(tw, "REPLICATION\t%d\n", td.Partitions.NumReplicas())
	fmt.Fprintf(tw, "INTERNAL\t%t\n", td.IsInternal)
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(out)
	printConfigs(out, rc.Configs, allConfigs, "non-default configs: none")

	fmt.Fprintln(out)
	tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PARTITION\tLEADER\tEPOCH\tREPLICAS\tISR\tLOG-START\tHIGH-WATERMARK")
	for _, p := range td.Partitions.Sorted() {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%s\t%s\t%s\n", p.Partition, p.Leader, p.LeaderEpoch,
			ids(p.Replicas), ids(p.ISR), offsetCell(starts, topic, p.Partition), offsetCell(ends, topic, p.Partition))
	}
	return tw.Flush()
}

// printConfigs prints a KEY VALUE SOURCE table, sorted by key; unless all is
// set, configs whose value is the default are left out.
func printConfigs(out io.Writer, configs []kadm.Config, all bool, noneLine string) {
	var shown []kadm.Config
	for _, c := range configs {
		if all || c.Source != kmsg.ConfigSourceDefaultConfig {
			shown = append(shown, c)
		}
	}
	if len(shown) == 0 {
		fmt.Fprintln(out, noneLine)
		return
	}
	sort.Slice(shown, func(i, j int) bool { return shown[i].Key < shown[j].Key })
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CONFIG\tVALUE\tSOURCE")
	for _, c := range shown {
		v := c.MaybeValue()
		switch {
		case c.Sensitive:
			v = "(sensitive)"
		case c.Value == nil:
			v = "(null)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Key, v, c.Source)
	}
	tw.Flush()
}

// ids prints broker ids as a comma-separated list.
func ids(list []int32) string {
	if len(list) == 0 {
		return "-"
	}
	s := make([]string, len(list))
	for i, id := range list {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, ",")
}

// offsetCell prints a listed offset, or the error name for that partition.
func offsetCell(l kadm.ListedOffsets, topic string, partition int32) string {
	o, ok := l.Lookup(topic, partition)
	switch {
	case !ok:
		return "?"
	case o.Err != nil:
		return errorName(o.Err)
	default:
		return strconv.FormatInt(o.Offset, 10)
	}
}
