package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/testcluster"
	"github.com/sluice-io/sluice/internal/testutil"
)

// runCLIFor is runCLI with a deadline of its own.
func runCLIFor(within time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	root := &cobra.Command{Use: "sluice", SilenceUsage: true, SilenceErrors: true}
	AddCommands(root)
	var out bytes.Buffer
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&out)
	err := root.ExecuteContext(ctx)
	return out.String(), err
}

// TestBrokerDecommissionWaitsForMovesInProgress: a move taking a partition
// off the broker is in progress (an interrupted decommission's) and cannot
// complete yet. The broker still holds that partition's only replica, so
// decommission must not report it empty (it did: moving partitions were
// counted at their target, and TestBalanceDecommissionKill's rerun retired
// a broker that was the only in-sync replica of three partitions, taking
// them offline with their acknowledged records). Once the move can
// complete, the rerun follows it and reports the broker empty.
func TestBrokerDecommissionWaitsForMovesInProgress(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 4-node cluster")
	}
	// Dedicated controller 1 and brokers 2-4: stopping a broker leaves the
	// quorum alone.
	c := testcluster.Start(t, testcluster.Options{Controllers: 1, Brokers: 3})
	addrs := strings.Join(c.Layout.BrokerAddrs(), ",")
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Layout.BrokerAddrs()...), kgo.DefaultProduceTopic("leaving"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "leaving", -1, -1
	ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	ra.Partition, ra.Replicas = 0, []int32{4}
	rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	req.Topics = append(req.Topics, rt)
	testutil.Eventually(t, 30*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := req.RequestWith(ctx, cl)
		return err == nil && (resp.Topics[0].ErrorCode == 0 || resp.Topics[0].ErrorCode == kerr.TopicAlreadyExists.Code)
	}, "topic creation")
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return cl.ProduceSync(ctx, &kgo.Record{Value: []byte("only on broker 4")}).FirstErr()
	}, "a record on broker 4")

	c.Stop(2) // broker 3 (node 1 is the controller): the move onto it cannot complete while it is down
	mustRun(t, "", "topic", "reassign", "leaving", "--partition", "0", "--replicas", "3,2", "--brokers", addrs)

	out, err := runCLIFor(20*time.Second, "broker", "decommission", "4", "--brokers", addrs)
	if err == nil || strings.Contains(out, "holds no replicas") || !strings.Contains(out, "Following 1 moves off broker 4 already in progress") {
		t.Fatalf("decommission with broker 4 the only replica of a partition still moving off it: %v, want it waiting for the move\n%s", err, out)
	}

	c.Restart(2)
	out, err = runCLIFor(60*time.Second, "broker", "decommission", "4", "--brokers", addrs)
	// The move may complete before this run looks ("Every move is done"
	// is then not printed); either way the broker ends empty.
	if err != nil || !strings.Contains(out, "Broker 4 holds no replicas.") {
		topic, _ := runCLIFor(20*time.Second, "topic", "describe", "leaving", "--brokers", addrs)
		moves, _ := runCLIFor(20*time.Second, "cluster", "rebalance", "--status", "--brokers", addrs)
		t.Fatalf("decommission once the move can complete: %v\n%s\nafterwards:\n%s\n%s", err, out, topic, moves)
	}
}
