package testcluster

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/testutil"
)

func adminClient(t *testing.T, addrs []string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// quorumLeader asks a broker (which forwards to the active controller) for
// the quorum's leader and checks the voters are listed.
func quorumLeader(t *testing.T, addr string, voters int) int32 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		t.Fatalf("DescribeQuorum: %v", err)
	}
	dq := resp.(*kmsg.DescribeQuorumResponse)
	if dq.ErrorCode != 0 || len(dq.Topics) != 1 || len(dq.Topics[0].Partitions) != 1 {
		t.Fatalf("DescribeQuorum: error %d, %+v", dq.ErrorCode, dq.Topics)
	}
	p := dq.Topics[0].Partitions[0]
	if p.ErrorCode != 0 || len(p.CurrentVoters) != voters || p.HighWatermark <= 0 {
		t.Fatalf("DescribeQuorum partition: %+v", p)
	}
	return p.LeaderID
}

// createTopic creates a topic through the cluster, retrying while the
// cluster settles (a new controller, a forwarded request on its way).
func createTopic(t *testing.T, adm *kadm.Client, name string, partitions int32) {
	t.Helper()
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := adm.CreateTopic(ctx, partitions, 1, nil, name)
		if err != nil {
			return err
		}
		return resp.Err
	}, "create topic %s", name)
}

func TestThreeCombinedNodesFailover(t *testing.T) {
	c := Start(t, Options{Nodes: 3, Overrides: map[string]string{
		"broker.session.timeout.ms":    "3000",
		"broker.heartbeat.interval.ms": "500",
	}})
	adm := adminClient(t, c.Layout.BrokerAddrs())
	createTopic(t, adm, "before", 3)

	leader := c.ActiveController(10 * time.Second)
	if got := quorumLeader(t, c.Layout.Nodes[(leader+1)%3].BrokerAddr, 3); got != c.Layout.Nodes[leader].ID {
		t.Fatalf("DescribeQuorum through a follower names leader %d, want %d", got, c.Layout.Nodes[leader].ID)
	}
	c.Stop(leader)
	next := c.ActiveController(15 * time.Second)
	if next == leader {
		t.Fatalf("node %d still leads after it stopped", leader+1)
	}
	createTopic(t, adm, "after", 1)
	if got := quorumLeader(t, c.Layout.Nodes[next].BrokerAddr, 3); got != c.Layout.Nodes[next].ID {
		t.Fatalf("DescribeQuorum after failover names leader %d, want %d", got, c.Layout.Nodes[next].ID)
	}

	c.Restart(leader)
	testutil.Eventually(t, 15*time.Second, func() bool {
		_, ok := c.Node(leader).Image().Topic("after")
		return ok
	}, "restarted node %d learns of topic 'after'", leader+1)
}

func TestDedicatedControllersAndBrokers(t *testing.T) {
	c := Start(t, Options{Controllers: 3, Brokers: 2, Overrides: map[string]string{
		"broker.session.timeout.ms":    "3000",
		"broker.heartbeat.interval.ms": "500",
	}})
	adm := adminClient(t, c.Layout.BrokerAddrs())
	createTopic(t, adm, "spread", 4)
	// Every broker learns the topic from the controllers as an observer.
	for i := 3; i < 5; i++ {
		testutil.Eventually(t, 10*time.Second, func() bool {
			_, ok := c.Node(i).Image().Topic("spread")
			return ok
		}, "broker %d learns of topic 'spread'", i+1)
	}
	leader := c.ActiveController(10 * time.Second)
	if leader > 2 {
		t.Fatalf("node %d (a broker) leads the quorum", leader+1)
	}
	if got := quorumLeader(t, c.Layout.BrokerAddrs()[0], 3); got != c.Layout.Nodes[leader].ID {
		t.Fatalf("DescribeQuorum through a broker names leader %d, want %d", got, c.Layout.Nodes[leader].ID)
	}
	c.Stop(leader)
	c.ActiveController(15 * time.Second)
	createTopic(t, adm, "after", 1)
}
