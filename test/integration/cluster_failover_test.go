package integration

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/testcluster"
	"github.com/sluice-io/sluice/internal/testutil"
)

// clusterOverrides shorten the broker session so a killed node is fenced
// within the test; the quorum keeps Kafka's default timeouts.
var clusterOverrides = map[string]string{
	"broker.session.timeout.ms":    "3000",
	"broker.heartbeat.interval.ms": "500",
}

// describeQuorumLeader asks addr (any broker) for the quorum's leader.
func describeQuorumLeader(addr string) (int32, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return -1, err
	}
	defer cl.Close()
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		return -1, err
	}
	dq := resp.(*kmsg.DescribeQuorumResponse)
	if err := kerr.ErrorForCode(dq.ErrorCode); err != nil {
		return -1, err
	}
	if len(dq.Topics) != 1 || len(dq.Topics[0].Partitions) != 1 {
		return -1, fmt.Errorf("DescribeQuorum answered %d topics", len(dq.Topics))
	}
	p := dq.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return -1, err
	}
	return p.LeaderID, nil
}

func clusterAdmin(t *testing.T, addrs []string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

func createTopicEventually(t *testing.T, adm *kadm.Client, name string, partitions int32) {
	t.Helper()
	createTopicEventuallyRF(t, adm, name, partitions, 1)
}

// createTopicEventuallyRF retries CreateTopics for 30 s (a cluster that has
// just started may have no controller or too few brokers yet); a topic that
// exists already (an earlier attempt that timed out) counts as created.
func createTopicEventuallyRF(t *testing.T, adm *kadm.Client, name string, partitions int32, rf int16) {
	t.Helper()
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := adm.CreateTopic(ctx, partitions, rf, nil, name)
		if err != nil {
			return err
		}
		if errors.Is(resp.Err, kerr.TopicAlreadyExists) {
			return nil
		}
		return resp.Err
	}, "create topic %s", name)
}

// partitionLeaders maps each partition of topic to its leader (-1 with
// the partition's error when it has none).
func partitionLeaders(adm *kadm.Client, topic string) (map[int32]int32, map[int32]error, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return nil, nil, err
	}
	td, ok := md.Topics[topic]
	if !ok || td.Err != nil {
		return nil, nil, fmt.Errorf("topic %s: %v", topic, td.Err)
	}
	leaders, errs := map[int32]int32{}, map[int32]error{}
	for p, pd := range td.Partitions {
		leaders[p], errs[p] = pd.Leader, pd.Err
	}
	return leaders, errs, nil
}

func produceEach(t *testing.T, addrs []string, topic string, partitions int32) error {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for p := range partitions {
		r := &kgo.Record{Topic: topic, Partition: p, Value: []byte(fmt.Sprint(p))}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			return fmt.Errorf("partition %d: %w", p, err)
		}
	}
	return nil
}

// TestClusterCombinedKillAndRestart runs 3 combined nodes as processes:
// kill -9 the active controller (a new one is elected, CreateTopics works,
// the killed node's RF=1 partitions report LEADER_NOT_AVAILABLE once it is
// fenced, and it serves again and catches up after a restart), then a
// whole-cluster restart keeps every topic.
func TestClusterCombinedKillAndRestart(t *testing.T) {
	c := testcluster.StartProcesses(t, binaryPath, testcluster.Options{Nodes: 3, Overrides: clusterOverrides})
	addrs := c.Layout.BrokerAddrs()
	adm := clusterAdmin(t, addrs)
	createTopicEventually(t, adm, "before", 3)
	testutil.EventuallyNoError(t, 10*time.Second, func() error { return produceEach(t, addrs, "before", 3) }, "produce before failover")

	var leader int32
	testutil.EventuallyNoError(t, 10*time.Second, func() (err error) {
		leader, err = describeQuorumLeader(addrs[0])
		if err == nil && leader <= 0 {
			err = fmt.Errorf("no leader yet")
		}
		return err
	}, "describe quorum")
	killed := int(leader) - 1
	c.Kill(killed)
	survivor := addrs[(killed+1)%3]
	testutil.EventuallyNoError(t, 15*time.Second, func() error {
		got, err := describeQuorumLeader(survivor)
		if err == nil && (got == leader || got <= 0) {
			err = fmt.Errorf("leader is %d", got)
		}
		return err
	}, "a new active controller")
	createTopicEventually(t, adm, "after", 1)

	testutil.EventuallyNoError(t, 15*time.Second, func() error {
		leaders, errs, err := partitionLeaders(adm, "before")
		if err != nil {
			return err
		}
		for p, l := range leaders {
			if l == leader {
				return fmt.Errorf("partition %d still led by the killed node %d", p, leader)
			}
		}
		for p, e := range errs {
			if leaders[p] == -1 && !errors.Is(e, kerr.LeaderNotAvailable) {
				return fmt.Errorf("leaderless partition %d answers %v, want LEADER_NOT_AVAILABLE", p, e)
			}
		}
		return nil
	}, "the killed node's partition leaderless")

	c.Start(killed)
	testutil.EventuallyNoError(t, 20*time.Second, func() error {
		return produceEach(t, addrs, "before", 3)
	}, "produce to every partition after the restart")
	restarted := clusterAdmin(t, []string{addrs[killed]})
	testutil.EventuallyNoError(t, 10*time.Second, func() error {
		_, _, err := partitionLeaders(restarted, "after")
		return err
	}, "the restarted node knows the topic created while it was down")

	for i := range 3 {
		c.Stop(i)
	}
	c.StartAll()
	adm = clusterAdmin(t, addrs)
	for _, topic := range []string{"before", "after"} {
		testutil.EventuallyNoError(t, 20*time.Second, func() error {
			_, _, err := partitionLeaders(adm, topic)
			return err
		}, "topic %s after the whole-cluster restart", topic)
	}
	testutil.EventuallyNoError(t, 20*time.Second, func() error {
		return produceEach(t, addrs, "before", 3)
	}, "produce after the whole-cluster restart")
}

// TestClusterDedicatedKillAndRestart runs 3 controllers and 3 brokers as
// processes: kill -9 the active controller (a new one is elected,
// CreateTopics works through the brokers, the killed controller rejoins),
// then kill -9 a broker (its RF=1 partitions report LEADER_NOT_AVAILABLE
// once fenced, and it serves them again after a restart).
func TestClusterDedicatedKillAndRestart(t *testing.T) {
	c := testcluster.StartProcesses(t, binaryPath, testcluster.Options{Controllers: 3, Brokers: 3, Overrides: clusterOverrides})
	addrs := c.Layout.BrokerAddrs()
	adm := clusterAdmin(t, addrs)
	createTopicEventually(t, adm, "spread", 6)
	testutil.EventuallyNoError(t, 10*time.Second, func() error { return produceEach(t, addrs, "spread", 6) }, "produce before failover")

	var leader int32
	testutil.EventuallyNoError(t, 10*time.Second, func() (err error) {
		leader, err = describeQuorumLeader(addrs[0])
		if err == nil && (leader <= 0 || leader > 3) {
			err = fmt.Errorf("leader %d is not a controller", leader)
		}
		return err
	}, "describe quorum")
	c.Kill(int(leader) - 1)
	testutil.EventuallyNoError(t, 15*time.Second, func() error {
		got, err := describeQuorumLeader(addrs[1])
		if err == nil && (got == leader || got <= 0) {
			err = fmt.Errorf("leader is %d", got)
		}
		return err
	}, "a new active controller")
	createTopicEventually(t, adm, "after-controller-failover", 1)
	c.Start(int(leader) - 1)

	broker := int32(5)
	c.Kill(int(broker) - 1)
	testutil.EventuallyNoError(t, 15*time.Second, func() error {
		leaders, errs, err := partitionLeaders(adm, "spread")
		if err != nil {
			return err
		}
		leaderless := 0
		for p, l := range leaders {
			if l == broker {
				return fmt.Errorf("partition %d still led by the killed broker", p)
			}
			if l == -1 {
				if !errors.Is(errs[p], kerr.LeaderNotAvailable) {
					return fmt.Errorf("leaderless partition %d answers %v", p, errs[p])
				}
				leaderless++
			}
		}
		if leaderless == 0 {
			return errors.New("no partition is leaderless")
		}
		return nil
	}, "the killed broker's partitions leaderless")
	c.Start(int(broker) - 1)
	testutil.EventuallyNoError(t, 20*time.Second, func() error {
		return produceEach(t, addrs, "spread", 6)
	}, "produce to every partition after the broker's restart")
}
