package testcluster

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
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
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		resp, err := adm.CreateTopic(ctx, partitions, 1, nil, name)
		cancel()
		if err == nil && resp.Err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("create topic %s: %v / %v", name, err, resp.Err)
		}
		time.Sleep(200 * time.Millisecond)
	}
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
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, ok := c.Node(leader).Image().Topic("after"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("restarted node %d never learned of topic 'after'", leader+1)
		}
		time.Sleep(50 * time.Millisecond)
	}
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
		deadline := time.Now().Add(10 * time.Second)
		for {
			if _, ok := c.Node(i).Image().Topic("spread"); ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("broker %d never learned of topic 'spread'", i+1)
			}
			time.Sleep(20 * time.Millisecond)
		}
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
