package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// resetOptions are the flags of group reset-offsets.
type resetOptions struct {
	topics     []string
	allTopics  bool
	toEarliest bool
	toLatest   bool
	toOffset   int64
	toDatetime string
	shiftBy    int64
	dryRun     bool
	execute    bool
}

func newGroupResetOffsetsCommand(conn *connection) *cobra.Command {
	o := &resetOptions{}
	cmd := &cobra.Command{
		Use:   "reset-offsets GROUP",
		Short: "Move a group's committed offsets (prints the plan; --execute applies it). The group must have no members",
		Long: `Move a group's committed offsets, as Kafka's kafka-consumer-groups --reset-offsets does.

Without --execute the command only prints the plan (GROUP TOPIC PARTITION NEW-OFFSET),
the same as --dry-run; with --execute it commits the new offsets and prints them.
New offsets are kept within each partition's log start and log end. A group that has
members is refused (Kafka's rule: a live member would overwrite the reset with its next
commit); a group that does not exist yet is created with the new offsets.`,
		Example: `  sluice group reset-offsets billing --topic orders --to-earliest
  sluice group reset-offsets billing --topic orders:0,1 --to-offset 42 --execute
  sluice group reset-offsets billing --all-topics --shift-by -100 --execute
  sluice group reset-offsets billing --topic orders --to-datetime 2026-11-30T08:00:00Z --execute`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeGroups(conn),
		RunE: func(cmd *cobra.Command, args []string) error {
			strategy, err := o.strategy(cmd)
			if err != nil {
				return err
			}
			ctx, adm, done, err := openAdmin(cmd, conn)
			if err != nil {
				return err
			}
			defer done()
			return resetOffsets(ctx, cmd, adm, args[0], o, strategy)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.topics, "topic", nil, "topic to reset, all its partitions, or TOPIC:P,P for some (repeatable)")
	f.BoolVar(&o.allTopics, "all-topics", false, "every topic the group has committed offsets for")
	f.BoolVar(&o.toEarliest, "to-earliest", false, "to the log start offset")
	f.BoolVar(&o.toLatest, "to-latest", false, "to the log end offset")
	f.Int64Var(&o.toOffset, "to-offset", 0, "to this offset")
	f.StringVar(&o.toDatetime, "to-datetime", "", "to the first offset whose timestamp is at or after this RFC 3339 time (the log end when none is)")
	f.Int64Var(&o.shiftBy, "shift-by", 0, "move the committed offset by N (negative: back)")
	f.BoolVar(&o.dryRun, "dry-run", false, "only print the plan (the default)")
	f.BoolVar(&o.execute, "execute", false, "commit the new offsets")
	cmd.MarkFlagsMutuallyExclusive("dry-run", "execute")
	cmd.MarkFlagsMutuallyExclusive("topic", "all-topics")
	cmd.MarkFlagsOneRequired("topic", "all-topics")
	return cmd
}

// resetStrategy computes a partition's new offset from its current commit
// (-1 when none), log start and log end; an error names why it cannot.
type resetStrategy func(p partitionOffsets) (int64, error)

// partitionOffsets is what a strategy may look at for one partition.
type partitionOffsets struct {
	committed, start, end, atTime int64
}

// strategy picks the one --to-*/--shift-by flag given and returns how it
// computes a new offset.
func (o *resetOptions) strategy(cmd *cobra.Command) (resetStrategy, error) {
	given := 0
	var s resetStrategy
	flags := cmd.Flags()
	if o.toEarliest {
		given++
		s = func(p partitionOffsets) (int64, error) { return p.start, nil }
	}
	if o.toLatest {
		given++
		s = func(p partitionOffsets) (int64, error) { return p.end, nil }
	}
	if flags.Changed("to-offset") {
		given++
		if o.toOffset < 0 {
			return nil, fmt.Errorf("--to-offset %d: want an offset of 0 or more", o.toOffset)
		}
		s = func(p partitionOffsets) (int64, error) { return o.toOffset, nil }
	}
	if flags.Changed("to-datetime") {
		given++
		if _, err := o.datetimeMillis(); err != nil {
			return nil, err
		}
		s = func(p partitionOffsets) (int64, error) { return p.atTime, nil }
	}
	if flags.Changed("shift-by") {
		given++
		s = func(p partitionOffsets) (int64, error) {
			if p.committed < 0 {
				return 0, errors.New("no committed offset to shift")
			}
			return p.committed + o.shiftBy, nil
		}
	}
	if given != 1 {
		return nil, errors.New("give exactly one of --to-earliest, --to-latest, --to-offset, --to-datetime, --shift-by")
	}
	return s, nil
}

func (o *resetOptions) datetimeMillis() (int64, error) {
	t, err := time.Parse(time.RFC3339Nano, o.toDatetime)
	if err != nil {
		return 0, fmt.Errorf("--to-datetime %q: want an RFC 3339 time such as 2026-11-30T08:00:00Z: %w", o.toDatetime, err)
	}
	return t.UnixMilli(), nil
}

// resetOffsets checks the group is inactive, computes the plan, prints it,
// and commits it with --execute.
func resetOffsets(ctx context.Context, cmd *cobra.Command, adm *kadm.Client, group string, o *resetOptions, strategy resetStrategy) error {
	if err := requireInactive(ctx, adm, group); err != nil {
		return err
	}
	committed, err := retryCoordinator(ctx, func() (kadm.OffsetResponses, error) {
		return adm.FetchOffsets(ctx, group)
	}, func(r kadm.OffsetResponses) bool { return coordinatorNotReady(r.Error()) })
	if err != nil {
		return fmt.Errorf("committed offsets of group %s: %w", group, describe(err))
	}
	if err := committed.Error(); err != nil {
		return fmt.Errorf("committed offsets of group %s: %w", group, describe(err))
	}
	targets, err := o.partitions(ctx, adm, committed)
	if err != nil {
		return err
	}
	plan, err := planReset(ctx, adm, o, targets, committed, strategy)
	if err != nil {
		return err
	}
	if o.execute {
		// Committing the same offsets again is harmless, so a commit the
		// coordinator refused as not ready is simply repeated.
		resp, err := retryCoordinator(ctx, func() (kadm.OffsetResponses, error) {
			return adm.CommitOffsets(ctx, group, plan)
		}, func(r kadm.OffsetResponses) bool { return coordinatorNotReady(r.Error()) })
		if err != nil {
			return fmt.Errorf("commit offsets of group %s: %w", group, describe(err))
		}
		if err := resp.Error(); err != nil {
			return fmt.Errorf("commit offsets of group %s: %w", group, describe(err))
		}
		// stdout is Kafka's table of the committed offsets; stderr says
		// they were committed, as the dry run says nothing was.
		plan = resp.Offsets()
		fmt.Fprintf(cmd.ErrOrStderr(), "committed the new offsets of group %s for %d partition(s)\n", group, countOffsets(plan))
	} else {
		fmt.Fprintln(cmd.ErrOrStderr(), "dry run: nothing was changed; add --execute to commit these offsets")
	}
	return printPlan(cmd.OutOrStdout(), group, plan)
}

// requireInactive refuses a group with members, as Kafka's tool does: a
// live member would commit over the reset. A group that does not exist
// (Dead, or GROUP_ID_NOT_FOUND from newer brokers) may be reset: that
// creates it (a classic group).
func requireInactive(ctx context.Context, adm *kadm.Client, group string) error {
	described, err := retryCoordinator(ctx, func() (kadm.DescribedGroups, error) {
		return adm.DescribeGroups(ctx, group)
	}, func(d kadm.DescribedGroups) bool { return coordinatorNotReady(d[group].Err) })
	if err != nil && len(described) == 0 {
		return fmt.Errorf("describe group %s: %w", group, describe(err))
	}
	d, ok := described[group]
	if !ok {
		return fmt.Errorf("describe group %s: no answer for this group", group)
	}
	switch {
	case errors.Is(d.Err, kerr.GroupIDNotFound):
		// DescribeGroups v6+ says so of a group that does not exist, and
		// of a consumer group (KIP-848), which only ConsumerGroupDescribe
		// describes.
		return requireInactiveConsumerGroup(ctx, adm, group)
	case d.Err != nil:
		return fmt.Errorf("describe group %s: %w", group, serverError(d.Err, d.ErrMessage))
	}
	if d.State != "Empty" && d.State != "Dead" {
		return fmt.Errorf("group %s is %s with %d member(s): offsets can be reset only when it has no members (stop its consumers first)",
			group, d.State, len(d.Members))
	}
	return nil
}

// requireInactiveConsumerGroup refuses a consumer group with members; a
// group ConsumerGroupDescribe does not know either (or a broker without
// the API) does not exist.
func requireInactiveConsumerGroup(ctx context.Context, adm *kadm.Client, group string) error {
	found, errs := describeConsumerGroups(ctx, adm, []string{group})
	if err := errs[group]; err != nil {
		return fmt.Errorf("describe consumer group %s: %w", group, err)
	}
	d, ok := found[group]
	if !ok || d.State == "Empty" {
		return nil
	}
	return fmt.Errorf("group %s is %s with %d member(s): offsets can be reset only when it has no members (stop its consumers first)",
		group, d.State, len(d.Members))
}

// partitions resolves --topic and --all-topics into the partitions to reset.
func (o *resetOptions) partitions(ctx context.Context, adm *kadm.Client, committed kadm.OffsetResponses) (kadm.TopicsSet, error) {
	set := make(kadm.TopicsSet)
	if o.allTopics {
		committed.Each(func(r kadm.OffsetResponse) {
			if r.At >= 0 {
				set.Add(r.Topic, r.Partition)
			}
		})
		if len(set) == 0 {
			return nil, errors.New("--all-topics: the group has no committed offsets")
		}
		return set, nil
	}
	wanted := make(map[string][]int32) // topic -> partitions, nil for all
	var names []string
	for _, spec := range o.topics {
		topic, parts, err := parseTopicPartitions(spec)
		if err != nil {
			return nil, err
		}
		if _, seen := wanted[topic]; !seen {
			names = append(names, topic)
		}
		wanted[topic] = append(wanted[topic], parts...)
	}
	md, err := adm.ListTopics(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("topic metadata: %w", describe(err))
	}
	for _, topic := range names {
		td, ok := md[topic]
		if !ok {
			return nil, fmt.Errorf("topic %s: no metadata", topic)
		}
		if td.Err != nil {
			return nil, fmt.Errorf("topic %s: %w", topic, describe(td.Err))
		}
		if len(wanted[topic]) == 0 {
			for p := range td.Partitions {
				set.Add(topic, p)
			}
			continue
		}
		for _, p := range wanted[topic] {
			if _, ok := td.Partitions[p]; !ok {
				return nil, fmt.Errorf("topic %s has no partition %d (it has %d)", topic, p, len(td.Partitions))
			}
			set.Add(topic, p)
		}
	}
	return set, nil
}

// parseTopicPartitions splits TOPIC or TOPIC:P,P,...
func parseTopicPartitions(spec string) (string, []int32, error) {
	topic, list, hasList := strings.Cut(spec, ":")
	topic = strings.TrimSpace(topic)
	if topic == "" {
		return "", nil, fmt.Errorf("--topic %q: empty topic name", spec)
	}
	if !hasList {
		return topic, nil, nil
	}
	var parts []int32
	for _, s := range strings.Split(list, ",") {
		p, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
		if err != nil || p < 0 {
			return "", nil, fmt.Errorf("--topic %q: %q is not a partition number", spec, s)
		}
		parts = append(parts, int32(p))
	}
	return topic, parts, nil
}

// planReset computes the new offset of every target partition, kept within
// the partition's log start and log end (as Kafka's tool does).
func planReset(ctx context.Context, adm *kadm.Client, o *resetOptions, targets kadm.TopicsSet,
	committed kadm.OffsetResponses, strategy resetStrategy) (kadm.Offsets, error) {
	topics := targets.Topics()
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("log start offsets: %w", describe(err))
	}
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("log end offsets: %w", describe(err))
	}
	var atTime kadm.ListedOffsets
	if o.toDatetime != "" {
		ms, err := o.datetimeMillis()
		if err != nil {
			return nil, err
		}
		if atTime, err = adm.ListOffsetsAfterMilli(ctx, ms, topics...); err != nil {
			return nil, fmt.Errorf("offsets by time: %w", describe(err))
		}
	}
	plan := make(kadm.Offsets)
	var failed error
	for _, tp := range targets.Sorted() {
		for _, p := range tp.Partitions {
			where := fmt.Sprintf("%s/%d", tp.Topic, p)
			po := partitionOffsets{committed: -1, atTime: -1}
			if c, ok := committed.Lookup(tp.Topic, p); ok && c.Err == nil {
				po.committed = c.At
			}
			var err error
			if po.start, err = listed(starts, tp.Topic, p); err != nil {
				failed = errors.Join(failed, fmt.Errorf("%s: log start: %w", where, err))
				continue
			}
			if po.end, err = listed(ends, tp.Topic, p); err != nil {
				failed = errors.Join(failed, fmt.Errorf("%s: log end: %w", where, err))
				continue
			}
			if atTime != nil {
				if po.atTime, err = listed(atTime, tp.Topic, p); err != nil {
					failed = errors.Join(failed, fmt.Errorf("%s: offset by time: %w", where, err))
					continue
				}
				if po.atTime < 0 { // no record at or after the time
					po.atTime = po.end
				}
			}
			at, err := strategy(po)
			if err != nil {
				failed = errors.Join(failed, fmt.Errorf("%s: %w", where, err))
				continue
			}
			at = max(po.start, min(at, po.end))
			plan.Add(kadm.Offset{Topic: tp.Topic, Partition: p, At: at, LeaderEpoch: -1})
		}
	}
	if failed != nil {
		return nil, failed
	}
	return plan, nil
}

// listed returns a listed offset or its error.
func listed(l kadm.ListedOffsets, topic string, partition int32) (int64, error) {
	o, ok := l.Lookup(topic, partition)
	switch {
	case !ok:
		return 0, errors.New("not listed")
	case o.Err != nil:
		return 0, describe(o.Err)
	default:
		return o.Offset, nil
	}
}

// printPlan prints the new offsets in Kafka's columns, sorted.
func printPlan(out io.Writer, group string, plan kadm.Offsets) error {
	rows := plan.Sorted()
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Topic != rows[j].Topic {
			return rows[i].Topic < rows[j].Topic
		}
		return rows[i].Partition < rows[j].Partition
	})
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tTOPIC\tPARTITION\tNEW-OFFSET")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", group, r.Topic, r.Partition, r.At)
	}
	return tw.Flush()
}

// countOffsets is the number of partitions in offsets.
func countOffsets(offsets kadm.Offsets) int {
	n := 0
	offsets.Each(func(kadm.Offset) { n++ })
	return n
}
