package testcluster

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
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
	c.Stop(leader)
	next := c.ActiveController(15 * time.Second)
	if next == leader {
		t.Fatalf("node %d still leads after it stopped", leader+1)
	}
	createTopic(t, adm, "after", 1)

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
