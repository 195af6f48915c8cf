package node_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/internal/node"
	"sluice/internal/testcluster"
	"sluice/internal/vfs"
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
	c := testcluster.Start(t, testcluster.Options{Controllers: 3, Brokers: 1, Overrides: map[string]string{
		"metadata.log.max.record.bytes.between.snapshots": "512",
	}})
	const broker = 3
	adm := newAdmin(t, c.Layout.Nodes[broker].BrokerAddr)
	var want []string
	for i := range snapshotTopics {
		name := fmt.Sprintf("snap-%03d", i)
		createTopicRetrying(t, adm, name)
		want = append(want, name)
	}
	active := c.ActiveController(10 * time.Second)
	awaitTopics(t, "active controller", c.Node(active).Image, want)
	if st := c.Node(active).QuorumStatus(); st.LogStartOffset <= 0 {
		t.Fatalf("controllers did not compact their log: %+v", st)
	}
	// A controller restarted after its snapshot keeps every topic.
	follower := (active + 1) % 3
	c.Stop(follower)
	c.Restart(follower)
	awaitTopics(t, "restarted controller", c.Node(follower).Image, want)

	active = c.ActiveController(10 * time.Second)
	ctrlAddr := c.Layout.Nodes[active].ControllerAddr
	if !servesFetchSnapshot(t, ctrlAddr) {
		t.Skip("the CONTROLLER listener does not serve FetchSnapshot (key 59): internal/node/cluster.go must pass api.FetchSnapshotHandler(n) with api.WithFetchSnapshot to the controller registry")
	}
	if id := metadataFetchAtZero(t, ctrlAddr); id.EndOffset <= 0 {
		t.Fatalf("a metadata fetch at offset 0 after compaction got no SnapshotId: %+v", id)
	}

	// A fresh broker: same id, empty dir.
	c.Stop(broker)
	nl := c.Layout.Nodes[broker]
	if err := os.RemoveAll(nl.LogDir); err != nil {
		t.Fatal(err)
	}
	if err := node.Format(vfs.Default, []string{nl.LogDir}, c.Layout.ClusterID, nl.ID, false); err != nil {
		t.Fatal(err)
	}
	c.Restart(broker)
	awaitTopics(t, "fresh broker", c.Node(broker).Image, want)
	topics, err := adm.ListTopics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := topics.Names(); len(got) < len(want) {
		t.Fatalf("fresh broker lists %d topics, want %d", len(got), len(want))
	}
}

type imageTopics interface{ TopicNames() []string }

func awaitTopics[I imageTopics](t *testing.T, who string, image func() I, want []string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := image().TopicNames()
		missing := 0
		for _, w := range want {
			if !slices.Contains(got, w) {
				missing++
			}
		}
		if missing == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s misses %d of %d topics", who, missing, len(want))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func newAdmin(t *testing.T, addr string) *kadm.Client {
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
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := adm.CreateTopic(ctx, 1, 1, nil, name)
		cancel()
		if err == nil && resp.Err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("create %s: %v %v", name, err, resp.Err)
		}
		time.Sleep(50 * time.Millisecond)
	}
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
