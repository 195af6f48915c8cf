package node

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/commitlog/logdir"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/testutil"
	"github.com/sluice-io/sluice/internal/vfs"
)

// snapshotTopics is how many topics the cluster test creates, one request
// each, so the controllers snapshot (every 512 bytes) and compact many
// times.
const snapshotTopics = 60

// TestClusterSnapshotsCompactAndFreshBrokerCatchesUp: 3 dedicated
// controllers snapshotting after tiny amounts of records and a dedicated
// broker. Topics are created until the log is compacted; a controller
// restarted after its snapshot keeps every topic; then the broker is wiped
// and started fresh: it must pull the snapshot with FetchSnapshot and see
// every topic.
func TestClusterSnapshotsCompactAndFreshBrokerCatchesUp(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 4-node cluster")
	}
	c := startSnapshotCluster(t, 3, 1, map[string]string{"metadata.log.max.record.bytes.between.snapshots": "512"})
	const broker = 3
	adm := snapshotAdmin(t, c.nodes[broker].brokerAddr)
	var want []string
	for i := range snapshotTopics {
		name := fmt.Sprintf("snap-%03d", i)
		createTopicRetrying(t, adm, name)
		want = append(want, name)
	}
	active := c.activeController(t)
	awaitTopics(t, "active controller", c.node(active).Image, want)
	if st := c.node(active).QuorumStatus(); st.LogStartOffset <= 0 {
		t.Fatalf("controllers did not compact their log: %+v", st)
	}
	// A controller restarted after its snapshot keeps every topic.
	follower := (active + 1) % 3
	c.stop(t, follower)
	c.start(t, follower)
	awaitTopics(t, "restarted controller", c.node(follower).Image, want)

	active = c.activeController(t)
	ctrlAddr := c.nodes[active].controllerAddr
	if !servesFetchSnapshot(t, ctrlAddr) {
		t.Fatal("the CONTROLLER listener does not serve FetchSnapshot (key 59)")
	}
	if id := metadataFetchAtZero(t, ctrlAddr); id.EndOffset <= 0 {
		t.Fatalf("a metadata fetch at offset 0 after compaction got no SnapshotId: %+v", id)
	}

	// A fresh broker: same id, empty dir.
	c.stop(t, broker)
	if err := os.RemoveAll(c.nodes[broker].dir); err != nil {
		t.Fatal(err)
	}
	c.format(t, broker)
	c.start(t, broker)
	awaitTopics(t, "fresh broker", c.node(broker).Image, want)
	topics, err := adm.ListTopics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := topics.Names(); len(got) < len(want) {
		t.Fatalf("fresh broker lists %d topics, want %d", len(got), len(want))
	}
}

func awaitTopics(t *testing.T, who string, image func() *metadata.Image, want []string) {
	t.Helper()
	testutil.EventuallyNoError(t, 20*time.Second, func() error {
		got := image().TopicNames()
		missing := 0
		for _, w := range want {
			if !slices.Contains(got, w) {
				missing++
			}
		}
		if missing > 0 {
			return fmt.Errorf("misses %d of %d topics", missing, len(want))
		}
		return nil
	}, "%s lists every topic", who)
}

func snapshotAdmin(t *testing.T, addr string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

func createTopicRetrying(t *testing.T, adm *kadm.Client, name string) {
	t.Helper()
	testutil.EventuallyNoError(t, 20*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := adm.CreateTopic(ctx, 1, 1, nil, name)
		if err != nil {
			return err
		}
		return resp.Err
	}, "create %s", name)
}

// servesFetchSnapshot asks a CONTROLLER listener's ApiVersions for key 59.
func servesFetchSnapshot(t *testing.T, addr string) bool {
	t.Helper()
	req := kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName, req.ClientSoftwareVersion = "sluice-test", "1"
	resp := controllerRequest(t, addr, req).(*kmsg.ApiVersionsResponse)
	if resp.ErrorCode != 0 {
		t.Fatalf("ApiVersions on the CONTROLLER listener: error %d", resp.ErrorCode)
	}
	return slices.ContainsFunc(resp.ApiKeys, func(k kmsg.ApiVersionsResponseApiKey) bool { return k.ApiKey == 59 })
}

// metadataFetchAtZero fetches __cluster_metadata-0 from offset 0 as an
// observer and returns the SnapshotId of the answer.
func metadataFetchAtZero(t *testing.T, addr string) kmsg.FetchResponseTopicPartitionSnapshotID {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis = -1, 10
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = "__cluster_metadata", [16]byte{15: 1}
	p := kmsg.NewFetchRequestTopicPartition()
	p.PartitionMaxBytes = 1 << 20
	rt.Partitions = append(rt.Partitions, p)
	req.Topics = append(req.Topics, rt)
	resp := controllerRequest(t, addr, req).(*kmsg.FetchResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("metadata fetch at 0: %+v", resp)
	}
	return resp.Topics[0].Partitions[0].SnapshotID
}

func controllerRequest(t *testing.T, addr string, req kmsg.Request) kmsg.Response {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		t.Fatalf("request key %d to %s: %v", req.Key(), addr, err)
	}
	return resp
}

// snapshotCluster is dedicated controllers (ids 1..) and dedicated brokers
// (the next ids) run in this process, each restartable.
type snapshotCluster struct {
	clusterID string
	voters    string
	overrides map[string]string
	nodes     []*snapshotClusterNode
}

type snapshotClusterNode struct {
	id                         int32
	controller                 bool
	dir                        string
	brokerAddr, controllerAddr string
	n                          *Node
	cancel                     context.CancelFunc
	done                       chan error
}

func startSnapshotCluster(t *testing.T, controllers, brokers int, overrides map[string]string) *snapshotCluster {
	t.Helper()
	id, err := kafka.RandomUUID()
	if err != nil {
		t.Fatal(err)
	}
	ports := snapshotClusterPorts(t, 2*(controllers+brokers))
	c := &snapshotCluster{clusterID: id.String(), overrides: overrides}
	var voters []string
	base := t.TempDir()
	for i := range controllers + brokers {
		m := &snapshotClusterNode{
			id: int32(i + 1), controller: i < controllers, dir: filepath.Join(base, fmt.Sprintf("node-%d", i+1)),
			brokerAddr: fmt.Sprintf("127.0.0.1:%d", ports[2*i]), controllerAddr: fmt.Sprintf("127.0.0.1:%d", ports[2*i+1]),
		}
		if m.controller {
			voters = append(voters, fmt.Sprintf("%d@%s", m.id, m.controllerAddr))
		}
		c.nodes = append(c.nodes, m)
	}
	c.voters = strings.Join(voters, ",")
	t.Cleanup(func() {
		for i := range c.nodes {
			c.stop(t, i)
		}
	})
	for i := range c.nodes {
		c.format(t, i)
		c.launch(t, i)
	}
	for i := range c.nodes {
		c.awaitReady(t, i)
	}
	return c
}

func (c *snapshotCluster) format(t *testing.T, i int) {
	t.Helper()
	m := c.nodes[i]
	if err := logdir.Format(vfs.Default, []string{m.dir}, c.clusterID, m.id, false); err != nil {
		t.Fatal(err)
	}
}

func (c *snapshotCluster) launch(t *testing.T, i int) {
	t.Helper()
	m := c.nodes[i]
	props := map[string]string{
		"node.id":                          fmt.Sprint(m.id),
		"controller.quorum.voters":         c.voters,
		"controller.listener.names":        "CONTROLLER",
		"listener.security.protocol.map":   "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"log.dirs":                         m.dir,
		"offsets.topic.replication.factor": "1",
	}
	if m.controller {
		props["process.roles"], props["listeners"] = "controller", "CONTROLLER://"+m.controllerAddr
	} else {
		props["process.roles"], props["listeners"] = "broker", "PLAINTEXT://"+m.brokerAddr
		props["advertised.listeners"] = "PLAINTEXT://" + m.brokerAddr
	}
	for k, v := range c.overrides {
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

func (c *snapshotCluster) awaitReady(t *testing.T, i int) {
	t.Helper()
	m := c.nodes[i]
	select {
	case <-m.n.Ready():
	case err := <-m.done:
		m.n = nil
		t.Fatalf("node %d stopped while starting: %v", m.id, err)
	case <-time.After(30 * time.Second):
		t.Fatalf("node %d not ready after 30s", m.id)
	}
}

func (c *snapshotCluster) start(t *testing.T, i int) {
	t.Helper()
	c.launch(t, i)
	c.awaitReady(t, i)
}

func (c *snapshotCluster) stop(t *testing.T, i int) {
	t.Helper()
	m := c.nodes[i]
	if m.n == nil {
		return
	}
	m.cancel()
	if err := <-m.done; err != nil {
		t.Errorf("node %d stopped with: %v", m.id, err)
	}
	m.n = nil
}

func (c *snapshotCluster) node(i int) *Node { return c.nodes[i].n }

func (c *snapshotCluster) activeController(t *testing.T) int {
	t.Helper()
	active := -1
	testutil.Eventually(t, 10*time.Second, func() bool {
		for i, m := range c.nodes {
			if m.controller && m.n != nil && m.n.IsActiveController() {
				active = i
				return true
			}
		}
		return false
	}, "an active controller")
	return active
}

// snapshotClusterPorts returns n distinct free ports on 127.0.0.1.
func snapshotClusterPorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports
}
