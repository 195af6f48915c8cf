package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/controller/balance"
)

// balanceFlags are the planner's options as flags.
type balanceFlags struct {
	tolerance float64
	byCount   bool
	interval  time.Duration
	noWait    bool
}

func (f *balanceFlags) add(cmd *cobra.Command) {
	cmd.Flags().Float64Var(&f.tolerance, "tolerance", balance.DefaultTolerance,
		"how far above or below the mean (a fraction of it) a broker's replicas, preferred leaders and bytes may stay")
	cmd.Flags().BoolVar(&f.byCount, "by-count", false, "balance replica counts only, not bytes")
	cmd.Flags().DurationVar(&f.interval, "progress-interval", time.Second, "how often progress is sampled")
}

func (f *balanceFlags) options() balance.Options {
	return balance.Options{Tolerance: f.tolerance, IgnoreBytes: f.byCount}
}

// newClusterRebalanceCommand plans, executes or follows a rebalance.
func newClusterRebalanceCommand(conn *connection) *cobra.Command {
	var dryRun, execute, status bool
	var bf balanceFlags
	cmd := &cobra.Command{
		Use:   "rebalance (--dry-run | --execute | --status)",
		Short: "Spread replicas and leaders evenly over the brokers",
		Long: `Plan the partition moves that spread replicas and preferred leaders evenly over the
brokers, by count and by bytes, never two replicas of a partition in one rack when racks allow,
moving as little as it takes to bring every broker within --tolerance of the mean. The plan is
computed from Metadata, DescribeCluster, ListPartitionReassignments and DescribeLogDirs with the
planner the active controller uses (sluice.balancer.auto.enable runs it on a broker's arrival or
departure).

--dry-run prints the plan and the loads it leads to. --execute starts it as partition
reassignments, shows progress until every move is done, then elects the preferred leaders.
--status shows the reassignments in progress with a progress bar and an estimated time left.`,
		Example: `  sluice cluster rebalance --dry-run
  sluice cluster rebalance --execute
  sluice cluster rebalance --status`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			n := 0
			for _, b := range []bool{dryRun, execute, status} {
				if b {
					n++
				}
			}
			if n != 1 {
				return errors.New("give exactly one of --dry-run, --execute and --status")
			}
			cl, err := conn.client(cmd)
			if err != nil {
				return err
			}
			defer cl.Close()
			adm := kadm.NewClient(cl)
			ctx, cancel := interruptible(cmd)
			defer cancel()
			out := cmd.OutOrStdout()
			if status {
				return rebalanceStatus(ctx, cl, adm, conn.timeout, out, bf.interval)
			}
			rctx, rcancel := conn.requestContext(ctx)
			view, err := loadClusterView(rctx, cl, adm, nil)
			rcancel()
			if err != nil {
				return err
			}
			plan := view.plan(bf.options())
			if err := printBalancePlan(out, plan); err != nil {
				return err
			}
			if dryRun {
				fmt.Fprintln(out)
				return printLoads(out, view, plan)
			}
			return runPlan(ctx, conn, cl, adm, plan, bf, out)
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the plan without moving anything")
	cmd.Flags().BoolVar(&execute, "execute", false, "start the plan and follow it to the end")
	cmd.Flags().BoolVar(&status, "status", false, "show the reassignments in progress")
	cmd.Flags().BoolVar(&bf.noWait, "no-wait", false, "with --execute, return once the moves have started")
	bf.add(cmd)
	return cmd
}

// runPlan starts plan, waits for its moves and elects preferred leaders.
func runPlan(ctx context.Context, conn *connection, cl *kgo.Client, adm *kadm.Client, plan balance.Plan, bf balanceFlags, out io.Writer) error {
	if len(plan.Reassignments) == 0 {
		fmt.Fprintln(out, "The cluster is balanced: nothing to move.")
		return nil
	}
	rctx, cancel := conn.requestContext(ctx)
	err := executePlan(rctx, adm, plan)
	cancel()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Started %d reassignments.\n", len(plan.Reassignments))
	if bf.noWait {
		return nil
	}
	return followPlan(ctx, conn, cl, adm, plan, bf, out)
}

// followPlan waits for every move in progress, then until Metadata shows
// the plan's partitions on their new replicas, and elects their preferred
// leaders.
func followPlan(ctx context.Context, conn *connection, cl *kgo.Client, adm *kadm.Client, plan balance.Plan, bf balanceFlags, out io.Writer) error {
	if err := waitForMoves(ctx, cl, adm, conn.timeout, out, bf.interval); err != nil {
		return err
	}
	if err := awaitPlanVisible(ctx, adm, plan, electRetryFor); err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, conn.timeout+electRetryFor)
	defer cancel()
	if err := electPreferred(rctx, adm, plan); err != nil {
		return err
	}
	fmt.Fprintln(out, "Every move is done; the preferred replicas lead.")
	return nil
}

// rebalanceStatus samples the moves in progress twice, interval apart,
// and prints the bar and the estimate.
func rebalanceStatus(ctx context.Context, cl *kgo.Client, adm *kadm.Client, timeout time.Duration, out io.Writer, interval time.Duration) error {
	sample := func() (moveProgress, error) {
		rctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return sampleProgress(rctx, cl, adm, time.Now())
	}
	first, err := sample()
	if err != nil {
		return err
	}
	if first.partitions == 0 {
		fmt.Fprintln(out, "No reassignment in progress.")
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(max(interval, 2*time.Second)):
	}
	second, err := sample()
	if err != nil {
		return err
	}
	fmt.Fprintln(out, progressLine(first, second, false))
	return nil
}
