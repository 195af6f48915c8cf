package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// newBrokerCommand groups the commands that act on one broker.
func newBrokerCommand() *cobra.Command {
	conn := &connection{}
	cmd := &cobra.Command{
		Use:   "broker",
		Short: "Take a broker out of service",
		Example: `  sluice broker decommission 4 --wait-for-shutdown
  sluice broker unregister 4`,
	}
	addConnectionFlags(cmd, conn)
	cmd.AddCommand(newBrokerDecommissionCommand(conn), newBrokerUnregisterCommand(conn))
	return cmd
}

func parseBrokerID(s string) (int32, error) {
	id, err := strconv.ParseInt(s, 10, 32)
	if err != nil || id < 0 {
		return 0, fmt.Errorf("broker id %q: want a non-negative integer", s)
	}
	return int32(id), nil
}

func newBrokerDecommissionCommand(conn *connection) *cobra.Command {
	var waitShutdown bool
	var bf balanceFlags
	cmd := &cobra.Command{
		Use:   "decommission ID",
		Short: "Move every replica off a broker, then remove it from the cluster",
		Long: `Move every replica off the broker (the balancing planner with the broker marked
decommissioning, executed as partition reassignments), showing progress with an estimated time
left, and elect the new preferred leaders. Rerunning it resumes where it stopped.

Once the broker holds nothing it must be stopped; then UnregisterBroker removes it from the
cluster metadata. With --wait-for-shutdown the command waits for the broker to stop (it is
fenced) and unregisters it; otherwise it unregisters at once a broker already stopped, and tells
you to stop a running one and run 'sluice broker unregister ID'.`,
		Example: `  sluice broker decommission 4
  sluice broker decommission 4 --wait-for-shutdown`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseBrokerID(args[0])
			if err != nil {
				return err
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
			registered, err := drainBroker(ctx, conn, cl, adm, id, bf, out)
			if err != nil || !registered {
				return err
			}
			return retireBroker(ctx, conn, cl, id, waitShutdown, out)
		},
	}
	cmd.Flags().BoolVar(&waitShutdown, "wait-for-shutdown", false, "wait for the broker to be stopped, then unregister it")
	bf.add(cmd)
	return cmd
}

// drainRounds bounds the plan-execute rounds of a decommission: a round
// leaves replicas behind only when a move was already in progress.
const drainRounds = 10

// unplacedChecks is how many views, a second apart, must find replicas
// with nowhere to go before a decommission gives up.
const unplacedChecks = 5

// drainBroker moves every replica off id. It reports whether id is still
// registered.
func drainBroker(ctx context.Context, conn *connection, cl *kgo.Client, adm *kadm.Client, id int32, bf balanceFlags, out io.Writer) (bool, error) {
	unplacedSeen := 0
	for range drainRounds + unplacedChecks {
		rctx, cancel := conn.requestContext(ctx)
		view, err := loadClusterView(rctx, cl, adm, []int32{id})
		cancel()
		if err != nil {
			return false, err
		}
		_, registered := view.fenced[id]
		// A replica a move is still taking off id counts as held: id may
		// be the partition's only in-sync replica until the move completes,
		// and retiring it then takes the partition offline.
		pending := view.leaving[id]
		held := len(pending)
		for _, p := range view.parts {
			if slices.Contains(p.Replicas, id) {
				held++
			}
		}
		if held == 0 {
			fmt.Fprintf(out, "Broker %d holds no replicas.\n", id)
			return registered, nil
		}
		if !registered {
			return false, fmt.Errorf("broker %d is not registered but %d partitions still list it: run 'sluice cluster rebalance --execute'", id, held)
		}
		opts := bf.options()
		opts.DrainOnly = true
		plan := view.plan(opts)
		fmt.Fprintf(out, "Broker %d holds %d replicas; ", id, held)
		if err := printBalancePlan(out, plan); err != nil {
			return true, err
		}
		if len(plan.Reassignments) == 0 && plan.Unplaced > 0 {
			// A move that has just completed can still show its union of
			// replicas in a broker's Metadata after the controller stopped
			// listing it; only a view that stays so for a few seconds means
			// the replicas truly have nowhere to go.
			if unplacedSeen++; unplacedSeen < unplacedChecks {
				select {
				case <-ctx.Done():
					return true, ctx.Err()
				case <-time.After(time.Second):
				}
				continue
			}
			return true, fmt.Errorf("broker %d: %d replicas have nowhere to go", id, plan.Unplaced)
		}
		if len(plan.Reassignments) > 0 {
			rctx, cancel := conn.requestContext(ctx)
			err := executePlan(rctx, adm, plan)
			cancel()
			if err != nil {
				return true, err
			}
			fmt.Fprintf(out, "Started %d reassignments.\n", len(plan.Reassignments))
		}
		// A partition already moving is pinned: the moves off id an
		// interrupted run started are followed with the new ones (id holds
		// their replicas until they complete); waiting for any other lets
		// the next round move it.
		if len(pending) > 0 {
			fmt.Fprintf(out, "Following %d moves off broker %d already in progress.\n", len(pending), id)
		}
		follow := plan
		follow.Reassignments = append(slices.Clone(plan.Reassignments), pending...)
		if err := followPlan(ctx, conn, cl, adm, follow, bf, out); err != nil {
			return true, err
		}
	}
	return true, fmt.Errorf("broker %d still holds replicas after %d rounds", id, drainRounds)
}

// stoppedFor is how long a broker must stay fenced to count as stopped: a
// broker that has just started is fenced too, until it catches up.
const stoppedFor = 5 * time.Second

// retireBroker unregisters id once it is stopped (fenced for stoppedFor).
func retireBroker(ctx context.Context, conn *connection, cl *kgo.Client, id int32, wait bool, out io.Writer) error {
	var fencedSince time.Time
	for announced := false; ; {
		rctx, cancel := conn.requestContext(ctx)
		brokers, err := describeBrokers(rctx, cl)
		cancel()
		if err != nil {
			return err
		}
		i := slices.IndexFunc(brokers, func(b kmsg.DescribeClusterResponseBroker) bool { return b.NodeID == id })
		fenced := i >= 0 && brokers[i].IsFenced
		switch {
		case i < 0:
			fmt.Fprintf(out, "Broker %d is no longer registered.\n", id)
			return nil
		case fenced && fencedSince.IsZero():
			fencedSince = time.Now()
		case fenced && time.Since(fencedSince) >= stoppedFor:
			return unregisterBroker(ctx, conn, cl, id, out)
		case fenced:
		case !wait:
			fmt.Fprintf(out, "Broker %d is still running. Stop it, then run 'sluice broker unregister %d' (or rerun with --wait-for-shutdown).\n", id, id)
			return nil
		default:
			fencedSince = time.Time{}
			if !announced {
				fmt.Fprintf(out, "Waiting for broker %d to be stopped...\n", id)
				announced = true
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// unregisterBroker sends UnregisterBroker (key 64), again while the
// answer is retriable (NOT_CONTROLLER while a new controller is elected),
// for up to unregisterRetryFor.
func unregisterBroker(ctx context.Context, conn *connection, cl *kgo.Client, id int32, out io.Writer) error {
	deadline := time.Now().Add(unregisterRetryFor)
	for {
		rctx, cancel := conn.requestContext(ctx)
		req := kmsg.NewPtrUnregisterBrokerRequest()
		req.BrokerID = id
		resp, err := req.RequestWith(rctx, cl)
		cancel()
		if err == nil {
			if err = kerr.ErrorForCode(resp.ErrorCode); err != nil && resp.ErrorMessage != nil {
				err = fmt.Errorf("%w: %s", err, *resp.ErrorMessage)
			}
		}
		if err == nil {
			fmt.Fprintf(out, "Broker %d unregistered.\n", id)
			return nil
		}
		if !kerr.IsRetriable(err) || time.Now().After(deadline) {
			return fmt.Errorf("unregister broker %d: %w", id, describe(err))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// unregisterRetryFor bounds the retries of a retriable UnregisterBroker.
const unregisterRetryFor = 60 * time.Second

func newBrokerUnregisterCommand(conn *connection) *cobra.Command {
	return &cobra.Command{
		Use:   "unregister ID",
		Short: "Remove a stopped broker's registration (UnregisterBroker)",
		Long: `Remove a broker's registration from the cluster metadata, as kafka-cluster.sh unregister
does. The broker should be stopped and hold no replicas ('sluice broker decommission' moves them
off first): partitions keep listing an unregistered broker as a replica.`,
		Example: `  sluice broker unregister 4`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseBrokerID(args[0])
			if err != nil {
				return err
			}
			cl, err := conn.client(cmd)
			if err != nil {
				return err
			}
			defer cl.Close()
			ctx, cancel := interruptible(cmd)
			defer cancel()
			return unregisterBroker(ctx, conn, cl, id, cmd.OutOrStdout())
		},
	}
}
