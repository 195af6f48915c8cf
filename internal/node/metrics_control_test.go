package node

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/testutil"
)

// TestControlMetricsOfACluster runs 3 combined nodes: exactly one reports
// itself the active controller, every node reports raft-metrics and a
// running broker state, and after M records produced and K committed the
// group's coordinator, and only it, reports a lag of M-K, whether it hosts
// the partition or not.
func TestControlMetricsOfACluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node cluster")
	}
	c := startCombinedCluster(t, 3, map[string]string{"offsets.topic.replication.factor": "3", "offsets.topic.num.partitions": "3"})
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		active, leaders := 0.0, map[float64]bool{}
		for i := range c.nodes {
			s := gatherNode(t, c.node(i))
			active += s["kafka_controller_kafkacontroller_activecontrollercount"]
			leaders[s["kafka_server_raftmetrics_current_leader"]] = true
			if st := s["kafka_server_kafkaserver_brokerstate"]; st != brokerRunning {
				return fmt.Errorf("node %d broker state %v", i+1, st)
			}
			if s[`kafka_server_raftmetrics_current_state{current_state="leader"}`]+s[`kafka_server_raftmetrics_current_state{current_state="follower"}`] != 1 {
				return fmt.Errorf("node %d is neither leader nor follower: %v", i+1, s)
			}
			if s["kafka_controller_kafkacontroller_activebrokercount"] != 3 {
				return fmt.Errorf("node %d sees %v active brokers", i+1, s["kafka_controller_kafkacontroller_activebrokercount"])
			}
		}
		if active != 1 || len(leaders) != 1 || leaders[-1] {
			return fmt.Errorf("active controllers %v, leaders %v", active, leaders)
		}
		return nil
	}, "one active controller, agreed on by every node")

	// Lag of a partition the group's coordinator hosts (replicated to every
	// node) and of one only another node hosts (asked of its leader).
	const groupID = "lag-group"
	adm, cl := newAdmin(t, c.nodes[0].brokerAddr)
	ctx := context.Background()
	coordinator := findCoordinator(t, adm, groupID)
	elsewhere := coordinator%3 + 1
	if _, err := adm.CreateTopic(ctx, 1, 3, nil, "local"); err != nil {
		t.Fatal(err)
	}
	createTopicOn(t, cl, "remote", elsewhere)
	produceAndCommit(t, adm, cl, groupID, "local", 10, 4)
	produceAndCommit(t, adm, cl, groupID, "remote", 8, 5)
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		for i := range c.nodes {
			s := gatherNode(t, c.node(i))
			for _, want := range []struct {
				topic          string
				committed, lag float64
			}{{"local", 4, 6}, {"remote", 5, 3}} {
				series := fmt.Sprintf(`{consumergroup=%q,partition="0",topic=%q}`, groupID, want.topic)
				cur, ok := s["kafka_consumergroup_current_offset"+series]
				if ok != (c.nodes[i].id == coordinator) {
					return fmt.Errorf("node %d (coordinator %d) reports %s: %v", i+1, coordinator, want.topic, ok)
				}
				if !ok {
					continue
				}
				lag, sum := s["kafka_consumergroup_lag"+series], s[fmt.Sprintf(`kafka_consumergroup_lag_sum{consumergroup=%q,topic=%q}`, groupID, want.topic)]
				if cur != want.committed || lag != want.lag || sum != want.lag {
					return fmt.Errorf("%s on node %d: current offset %v, lag %v, lag sum %v", want.topic, i+1, cur, lag, sum)
				}
			}
		}
		return nil
	}, "the group's coordinator (node %d) reports the lag of a local and a remote partition", coordinator)
}

// findCoordinator returns the group's coordinator, creating the offsets
// topic on first use.
func findCoordinator(t *testing.T, adm *kadm.Client, groupID string) int32 {
	t.Helper()
	var id int32
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		r := adm.FindGroupCoordinators(context.Background(), groupID)[groupID]
		id = r.NodeID
		return r.Err
	}, "a coordinator for %q", groupID)
	return id
}

// createTopicOn creates a topic of one partition whose only replica is on
// broker.
func createTopicOn(t *testing.T, cl *kgo.Client, topic string, broker int32) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	ra.Partition, ra.Replicas = 0, []int32{broker}
	rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 10000
	resp, err := req.RequestWith(context.Background(), cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.Topics[0].ErrorCode)
	}
	if err != nil {
		t.Fatalf("create %s on broker %d: %v", topic, broker, err)
	}
}

// produceAndCommit writes produced records to partition 0 of topic and
// commits offset committed for the group.
func produceAndCommit(t *testing.T, adm *kadm.Client, cl *kgo.Client, groupID, topic string, produced, committed int64) {
	t.Helper()
	ctx := context.Background()
	for i := range produced {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "r%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	offsets := kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: topic, Partition: 0, At: committed, LeaderEpoch: -1})
	resp, err := adm.CommitOffsets(ctx, groupID, offsets)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// gatherNode scrapes n's registry into name{labels} -> value.
func gatherNode(t *testing.T, n *Node) map[string]float64 {
	t.Helper()
	return testutil.Gather(t, n.metrics.(prometheus.Gatherer))
}

// startCombinedCluster starts n combined nodes (broker and controller) in
// this process, each a voter, and waits until all serve.
func startCombinedCluster(t *testing.T, n int, overrides map[string]string) *snapshotCluster {
	t.Helper()
	id, err := kafka.RandomUUID()
	if err != nil {
		t.Fatal(err)
	}
	ports := snapshotClusterPorts(t, 2*n)
	c := &snapshotCluster{clusterID: id.String()}
	var voters []string
	base := t.TempDir()
	for i := range n {
		m := &snapshotClusterNode{
			id: int32(i + 1), controller: true, dir: filepath.Join(base, fmt.Sprintf("node-%d", i+1)),
			brokerAddr: fmt.Sprintf("127.0.0.1:%d", ports[2*i]), controllerAddr: fmt.Sprintf("127.0.0.1:%d", ports[2*i+1]),
		}
		voters = append(voters, fmt.Sprintf("%d@%s", m.id, m.controllerAddr))
		c.nodes = append(c.nodes, m)
	}
	c.voters = strings.Join(voters, ",")
	t.Cleanup(func() {
		for i := range c.nodes {
			c.stop(t, i)
		}
	})
	for i, m := range c.nodes {
		c.format(t, i)
		props := map[string]string{
			"node.id": fmt.Sprint(m.id), "process.roles": "broker,controller", "controller.quorum.voters": c.voters,
			"controller.listener.names": "CONTROLLER", "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
			"listeners":            "PLAINTEXT://" + m.brokerAddr + ",CONTROLLER://" + m.controllerAddr,
			"advertised.listeners": "PLAINTEXT://" + m.brokerAddr, "log.dirs": m.dir,
		}
		for k, v := range overrides {
			props[k] = v
		}
		cfg, err := config.Parse("", props)
		if err != nil {
			t.Fatal(err)
		}
		if m.n, err = New(cfg, nil, nil); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		m.cancel, m.done = cancel, make(chan error, 1)
		go func(n *Node, done chan<- error) { done <- n.Run(ctx) }(m.n, m.done)
	}
	for i := range c.nodes {
		c.awaitReady(t, i)
	}
	return c
}

// TestControlMetricsByRole: a dedicated controller exports the
// KafkaController gauges and raft-metrics but no broker series; a
// dedicated broker exports raft-metrics as an observer, its BrokerState
// and the group coordinator's series, and no KafkaController gauges.
func TestControlMetricsByRole(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 2-node cluster")
	}
	c := startSnapshotCluster(t, 1, 1, nil)
	const controller, broker = 0, 1
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		s := gatherNode(t, c.node(controller))
		if s["kafka_controller_kafkacontroller_activecontrollercount"] != 1 || s[`kafka_server_raftmetrics_current_state{current_state="leader"}`] != 1 {
			return fmt.Errorf("controller: %v", s)
		}
		for name := range s {
			if strings.HasPrefix(name, "kafka_server_kafkaserver_") || strings.HasPrefix(name, "kafka_server_groupcoordinatormetrics_") {
				return fmt.Errorf("controller exports %s", name)
			}
		}
		s = gatherNode(t, c.node(broker))
		if s[`kafka_server_raftmetrics_current_state{current_state="observer"}`] != 1 || s["kafka_server_raftmetrics_current_leader"] != 1 ||
			s["kafka_server_kafkaserver_brokerstate"] != brokerRunning {
			return fmt.Errorf("broker: %v", s)
		}
		if _, ok := s["kafka_coordinator_group_groupmetadatamanager_numgroups"]; !ok {
			return fmt.Errorf("broker exports no group coordinator metrics")
		}
		for name := range s {
			if strings.HasPrefix(name, "kafka_controller_") {
				return fmt.Errorf("broker exports %s", name)
			}
		}
		return nil
	}, "each role exports its own series")
}

// TestControlMetricsOfASingleNode: the lone voter leads, runs its broker
// and reports both.
func TestControlMetricsOfASingleNode(t *testing.T) {
	n, _, _ := startNode(t, t.TempDir())
	testutil.EventuallyNoError(t, 10*time.Second, func() error {
		s := gatherNode(t, n)
		if s["kafka_controller_kafkacontroller_activecontrollercount"] != 1 || s["kafka_server_kafkaserver_brokerstate"] != brokerRunning ||
			s[`kafka_server_raftmetrics_current_state{current_state="leader"}`] != 1 || s["kafka_server_raftmetrics_current_vote"] != 1 ||
			s["kafka_controller_kafkacontroller_activebrokercount"] != 1 || s["kafka_server_raftmetrics_high_watermark"] < 1 {
			return fmt.Errorf("single node: %v", s)
		}
		return nil
	}, "a single node's control-plane metrics")
}
