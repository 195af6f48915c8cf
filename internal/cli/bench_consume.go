package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"
)

// benchConsumeOptions are the flags of `sluice bench consume`.
type benchConsumeOptions struct {
	duration time.Duration
	count    int64
	json     bool
}

func newBenchConsumeCommand(conn *connection) *cobra.Command {
	o := &benchConsumeOptions{}
	cmd := &cobra.Command{
		Use:   "consume TOPIC",
		Short: "Read a topic from the start as fast as possible; report records/s, MB/s and end-to-end latency",
		Long: "Read every partition of TOPIC from its start until --count records, --duration, or (by default) " +
			"the end offsets listed when the run began. Latency is end to end: from the record's timestamp to " +
			"its delivery here, so it is meaningful while a producer (e.g. `sluice bench produce`) writes at " +
			"the same time, and shows the age of old records otherwise.",
		Example: `  sluice bench consume perf
  sluice bench consume perf --count 1000000 --json
  sluice bench produce perf -d 30s & sluice bench consume perf -d 30s   # live end-to-end latency`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeTopics(conn, true),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBenchConsume(cmd, conn, o, args[0])
		},
	}
	f := cmd.Flags()
	f.DurationVarP(&o.duration, "duration", "d", 0, "stop after this long (0: no time limit)")
	f.Int64VarP(&o.count, "count", "n", 0, "stop after this many records (0: no count limit)")
	f.BoolVar(&o.json, "json", false, "print the result as one JSON object")
	return cmd
}

func runBenchConsume(cmd *cobra.Command, conn *connection, o *benchConsumeOptions, topic string) error {
	ctx, stop := interruptible(cmd)
	defer stop()
	// Without a count or a duration the run ends at the end offsets as they
	// are now, exactly as `consume --exit` does.
	plan, err := planConsume(ctx, cmd, conn, &consumeOptions{offset: "start", exitAtEnd: o.count == 0 && o.duration == 0}, topic)
	if err != nil {
		return err
	}
	assign := make(map[int32]kgo.Offset, len(plan.partitions))
	for _, p := range plan.partitions {
		assign[p] = kgo.NewOffset().AtStart()
	}
	cl, err := conn.client(cmd, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: assign}), kgo.KeepControlRecords())
	if err != nil {
		return err
	}
	defer cl.Close()

	runCtx := ctx
	if o.duration > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, o.duration)
		defer cancel()
	}
	stats := &benchStats{start: time.Now()}
	live := startProgress(cmd.ErrOrStderr(), stats)
	var failure error
	var seen int64
	for !plan.done() && failure == nil {
		fetches := cl.PollFetches(runCtx)
		if runCtx.Err() != nil {
			break
		}
		if err := fetchError(fetches); err != nil {
			failure = err
			break
		}
		now := time.Now()
		fetches.EachRecord(func(r *kgo.Record) {
			if plan.done() {
				return
			}
			plan.reached(r)
			if r.Attrs.IsControl() {
				return
			}
			stats.add(len(r.Key)+len(r.Value), now.Sub(r.Timestamp))
			seen++
			if o.count > 0 && seen >= o.count {
				plan.finished = true
			}
		})
	}
	end := time.Now()
	live.finish()
	if err := stats.result("consume", topic, "end to end (record timestamp to delivery)", end).write(cmd.OutOrStdout(), o.json); err != nil {
		return err
	}
	if failure != nil {
		return fmt.Errorf("consume %s: %w", topic, failure)
	}
	return nil
}
