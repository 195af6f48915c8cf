package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// consumeOptions are the flags of `sluice consume`.
type consumeOptions struct {
	offset     string
	timestamp  string
	partitions []int32
	count      int
	group      string
	format     string
	json       bool
	exitAtEnd  bool
}

func newConsumeCommand() *cobra.Command {
	conn := &connection{}
	o := &consumeOptions{}
	cmd := &cobra.Command{
		Use:   "consume TOPIC",
		Short: "Print records of a topic; follows new records until Ctrl-C (or -n, or -e)",
		Long: "Print records of a topic, by default from the start of every partition, and keep " +
			"following new records until interrupted. Format verbs for -f: " + formatVerbs + ".",
		Example: `  sluice consume orders
  sluice consume orders --offset -10 -e            # the last 10 records of each partition, then exit
  sluice consume orders -p 0,2 --offset 1500 -n 100
  sluice consume orders --timestamp 2026-11-30T10:00:00Z -f '%p/%o %k=%v (%h)\n'
  sluice consume orders --json | jq .value
  sluice consume orders --group billing --offset end`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeTopics(conn, true),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runConsume(cmd, conn, o, args[0])
		},
	}
	addConnectionFlags(cmd, conn)
	f := cmd.Flags()
	f.StringVarP(&o.offset, "offset", "o", "start", "where to begin in each partition: start, end, N (an offset) or -N (N before the end)")
	f.StringVar(&o.timestamp, "timestamp", "", "begin at the first record at or after this time (Unix ms or RFC 3339); overrides --offset")
	f.Int32SliceVarP(&o.partitions, "partitions", "p", nil, "partitions to read; without it all")
	hideEmptyDefault(cmd, "partitions")
	f.IntVarP(&o.count, "count", "n", 0, "exit after this many records (0: no limit)")
	f.StringVarP(&o.group, "group", "g", "", "consume as a member of this consumer group, committing what was printed")
	f.StringVarP(&o.format, "format", "f", "%v\n", "output format per record")
	f.BoolVar(&o.json, "json", false, "print one JSON object per record (topic, partition, offset, timestamp, key, value, headers)")
	f.BoolVarP(&o.exitAtEnd, "exit", "e", false, "exit at the end of the partitions as they were at start instead of following")
	return cmd
}

// startOffset turns --offset / --timestamp into a kgo offset.
func (o *consumeOptions) startOffset() (kgo.Offset, error) {
	if o.timestamp != "" {
		ms, err := parseTimestamp(o.timestamp)
		if err != nil {
			return kgo.Offset{}, err
		}
		return kgo.NewOffset().AfterMilli(ms), nil
	}
	switch strings.ToLower(o.offset) {
	case "start", "beginning", "earliest", "oldest":
		return kgo.NewOffset().AtStart(), nil
	case "end", "latest", "newest":
		return kgo.NewOffset().AtEnd(), nil
	}
	n, err := strconv.ParseInt(o.offset, 10, 64)
	if err != nil {
		return kgo.Offset{}, fmt.Errorf("--offset %q: want start, end, N or -N", o.offset)
	}
	if n < 0 {
		return kgo.NewOffset().AtEnd().Relative(n), nil
	}
	return kgo.NewOffset().At(n), nil
}

// parseTimestamp reads Unix milliseconds or an RFC 3339 time.
func parseTimestamp(s string) (int64, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return ms, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("--timestamp %q: want Unix milliseconds or RFC 3339 (2026-11-30T10:00:00Z)", s)
	}
	return t.UnixMilli(), nil
}

func runConsume(cmd *cobra.Command, conn *connection, o *consumeOptions, topic string) error {
	start, err := o.startOffset()
	if err != nil {
		return err
	}
	var format *recordFormat
	if !o.json {
		if format, err = parseRecordFormat(o.format); err != nil {
			return err
		}
	}
	if o.group != "" && len(o.partitions) > 0 {
		return errors.New("--group and --partitions do not combine: the group assigns partitions")
	}
	ctx, stop := interruptible(cmd)
	defer stop()

	plan, err := planConsume(ctx, cmd, conn, o, topic)
	if err != nil {
		return err
	}
	// Control records (transaction markers) are kept only to see how far
	// a partition was read; they are never printed.
	opts := []kgo.Opt{kgo.KeepControlRecords()}
	if o.group != "" {
		opts = append(opts, kgo.ConsumerGroup(o.group), kgo.ConsumeTopics(topic),
			kgo.ConsumeStartOffset(start), kgo.AutoCommitMarks())
	} else {
		assign := make(map[int32]kgo.Offset, len(plan.partitions))
		for _, p := range plan.partitions {
			assign[p] = start
		}
		opts = append(opts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: assign}))
	}
	cl, err := conn.client(cmd, opts...)
	if err != nil {
		return err
	}
	defer cl.Close()

	out := bufio.NewWriter(cmd.OutOrStdout())
	defer out.Flush()
	var buf []byte
	printed := 0
	for !plan.done() {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		if err := fetchError(fetches); err != nil {
			return fmt.Errorf("consume %s: %w", topic, err)
		}
		iter := fetches.RecordIter()
		for !iter.Done() && !plan.done() {
			r := iter.Next()
			if o.group != "" {
				cl.MarkCommitRecords(r)
			}
			if r.Attrs.IsControl() {
				plan.reached(r)
				continue
			}
			if o.json {
				if buf, err = appendJSON(buf[:0], r); err != nil {
					return err
				}
			} else {
				buf = format.append(buf[:0], r)
			}
			if _, err := out.Write(buf); err != nil {
				return fmt.Errorf("write output: %w", err)
			}
			printed++
			plan.counted(printed)
			plan.reached(r)
		}
		if err := out.Flush(); err != nil {
			return fmt.Errorf("write output: %w", err)
		}
	}
	if o.group != "" {
		cctx, cancel := conn.requestContext(context.Background())
		defer cancel()
		if err := cl.CommitMarkedOffsets(cctx); err != nil {
			return fmt.Errorf("commit offsets of group %s: %w", o.group, describe(err))
		}
	}
	return nil
}

// fetchError returns the first error of a poll, skipping the ones that only
// say the client is stopping.
func fetchError(fetches kgo.Fetches) error {
	for _, fe := range fetches.Errors() {
		if errors.Is(fe.Err, context.Canceled) || errors.Is(fe.Err, kgo.ErrClientClosed) {
			continue
		}
		if fe.Topic == "" {
			return describe(fe.Err)
		}
		return fmt.Errorf("partition %d: %w", fe.Partition, describe(fe.Err))
	}
	return nil
}

// consumePlan is what consume reads and when it stops: after count records,
// or with --exit when every partition reached its end offset as listed at
// start.
type consumePlan struct {
	partitions []int32
	count      int
	finished   bool
	remaining  map[int32]int64 // --exit: partition -> end offset not yet reached
}

func (p *consumePlan) done() bool { return p.finished }

// counted notes that printed records were output; -n may be reached.
func (p *consumePlan) counted(printed int) {
	if p.count > 0 && printed >= p.count {
		p.finished = true
	}
}

// reached notes the consumer got to r (a data or control record); --exit
// may be satisfied. Control records count here: a partition whose log ends
// with a transaction marker has its end offset after the last data record.
func (p *consumePlan) reached(r *kgo.Record) {
	if p.remaining != nil {
		if end, ok := p.remaining[r.Partition]; ok && r.Offset+1 >= end {
			delete(p.remaining, r.Partition)
		}
		if len(p.remaining) == 0 {
			p.finished = true
		}
	}
}

// planConsume checks the topic exists (and, with --group, that the broker
// serves consumer groups) and lists what to read.
func planConsume(ctx context.Context, cmd *cobra.Command, conn *connection, o *consumeOptions, topic string) (*consumePlan, error) {
	adm, err := conn.admin(ctx, cmd)
	if err != nil {
		return nil, err
	}
	defer adm.Close()
	rctx, cancel := conn.requestContext(ctx)
	defer cancel()
	md, err := adm.Metadata(rctx, topic)
	if err != nil {
		return nil, fmt.Errorf("metadata of %s: %w", topic, describe(err))
	}
	td, ok := md.Topics[topic]
	if !ok {
		return nil, fmt.Errorf("metadata of %s: no answer for this topic", topic)
	}
	if td.Err != nil {
		return nil, fmt.Errorf("topic %s: %w", topic, describe(td.Err))
	}
	if o.group != "" {
		if err := requireGroupAPIs(rctx, adm); err != nil {
			return nil, err
		}
	}
	plan := &consumePlan{partitions: o.partitions, count: o.count}
	if len(plan.partitions) == 0 {
		plan.partitions = td.Partitions.Numbers()
	}
	for _, p := range plan.partitions {
		if _, ok := td.Partitions[p]; !ok {
			return nil, fmt.Errorf("topic %s has no partition %d (it has %d)", topic, p, len(td.Partitions))
		}
	}
	sort.Slice(plan.partitions, func(i, j int) bool { return plan.partitions[i] < plan.partitions[j] })
	if o.exitAtEnd {
		if err := plan.listEnds(rctx, adm, o, topic); err != nil {
			return nil, err
		}
	}
	return plan, nil
}

// listEnds records, for --exit, the offset each partition must reach; a
// partition with nothing to read from the start position is done already.
func (p *consumePlan) listEnds(ctx context.Context, adm *kadm.Client, o *consumeOptions, topic string) error {
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return fmt.Errorf("end offsets of %s: %w", topic, describe(err))
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return fmt.Errorf("start offsets of %s: %w", topic, describe(err))
	}
	var afterTime kadm.ListedOffsets
	if o.timestamp != "" {
		ms, err := parseTimestamp(o.timestamp)
		if err != nil {
			return err
		}
		if afterTime, err = adm.ListOffsetsAfterMilli(ctx, ms, topic); err != nil {
			return fmt.Errorf("offsets of %s after %s: %w", topic, o.timestamp, describe(err))
		}
	}
	var committed kadm.OffsetResponses
	if o.group != "" {
		// A group member resumes at the group's commits, where they exist.
		committed, err = retryCoordinator(ctx, func() (kadm.OffsetResponses, error) {
			return adm.FetchOffsets(ctx, o.group)
		}, nil)
		if err != nil {
			return fmt.Errorf("committed offsets of group %s: %w", o.group, describe(err))
		}
	}
	p.remaining = make(map[int32]int64)
	for _, part := range p.partitions {
		end, ok := ends.Lookup(topic, part)
		if !ok {
			return fmt.Errorf("end offset of %s/%d: no answer for this partition", topic, part)
		}
		if end.Err != nil {
			return fmt.Errorf("end offset of %s/%d: %w", topic, part, describe(end.Err))
		}
		first := int64(0)
		if s, ok := starts.Lookup(topic, part); ok && s.Err == nil {
			first = s.Offset
		}
		from, known := o.fixedStart(first, end.Offset)
		if t, ok := afterTime.Lookup(topic, part); ok && t.Err == nil {
			// No record at or after the time: the offset is -1 or the end.
			from, known = t.Offset, true
			if from < 0 {
				from = end.Offset
			}
		}
		if c, ok := committed.Lookup(topic, part); ok && c.Err == nil && c.At >= 0 {
			from, known = c.At, true
		}
		if known && from >= end.Offset {
			continue
		}
		p.remaining[part] = end.Offset
	}
	if len(p.remaining) == 0 {
		p.finished = true
	}
	return nil
}

// fixedStart is where --offset begins in a partition whose log spans
// [first, end), when that is known without a lookup (not for timestamps).
func (o *consumeOptions) fixedStart(first, end int64) (int64, bool) {
	if o.timestamp != "" {
		return 0, false
	}
	switch strings.ToLower(o.offset) {
	case "start", "beginning", "earliest", "oldest":
		return first, true
	case "end", "latest", "newest":
		return end, true
	}
	n, err := strconv.ParseInt(o.offset, 10, 64)
	if err != nil {
		return 0, false
	}
	if n < 0 {
		n = max(end+n, first)
	}
	return max(n, first), true
}

// requireGroupAPIs fails with a clear message when a broker does not
// advertise the consumer group requests.
func requireGroupAPIs(ctx context.Context, adm *kadm.Client) error {
	versions, err := adm.ApiVersions(ctx)
	if err != nil {
		return fmt.Errorf("api versions: %w", describe(err))
	}
	for _, v := range versions.Sorted() {
		if v.Err != nil {
			return fmt.Errorf("api versions of broker %d: %w", v.NodeID, describe(v.Err))
		}
		if err := missingGroupAPI(v.NodeID, func(key int16) bool {
			_, ok := v.KeyMaxVersion(key)
			return ok
		}); err != nil {
			return err
		}
	}
	return nil
}

// missingGroupAPI names the first request a classic group member sends
// (FindCoordinator, JoinGroup, Heartbeat, LeaveGroup, SyncGroup,
// OffsetCommit, OffsetFetch) that a broker does not advertise.
func missingGroupAPI(broker int32, advertised func(key int16) bool) error {
	for _, key := range []int16{10, 11, 12, 13, 14, 8, 9} {
		if !advertised(key) {
			return fmt.Errorf("--group: broker %d does not serve consumer groups (it does not advertise %s, API key %d)",
				broker, kmsg.NameForKey(key), key)
		}
	}
	return nil
}
