package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/testbin"
	"github.com/sluice-io/sluice/internal/testutil"
)

// consoleServer is a single-node `sluice server` process with its web
// console on a loopback port.
type consoleServer struct {
	*testbin.Server
	url     string // http://127.0.0.1:port, the console
	dataDir string
	ports   []int // client, controller, console: a restart keeps them
}

// startConsoleServer runs sluice on dataDir with the console listener and
// waits until Kafka clients and the console answer. ports (client,
// controller, console) are reused on a restart; nil picks free ones.
func startConsoleServer(t *testing.T, dataDir string, ports []int, overrides ...string) *consoleServer {
	t.Helper()
	if ports == nil {
		var err error
		if ports, err = testbin.FreePorts(3); err != nil {
			t.Fatal(err)
		}
	}
	consoleAddr := "127.0.0.1:" + strconv.Itoa(ports[2])
	s := &consoleServer{url: "http://" + consoleAddr, dataDir: dataDir, ports: ports}
	s.Server = testbin.StartServer(t, testbin.Build(t), testbin.ServerConfig{
		DataDir: dataDir, ClientPort: ports[0], ControllerPort: ports[1],
		Overrides: append([]string{"sluice.console.listener=" + consoleAddr}, overrides...),
	})
	waitConsole(t, s.url)
	return s
}

// waitConsole waits until the console at url serves its first page (the
// process answers Kafka clients a moment before its HTTP listeners).
func waitConsole(t *testing.T, url string) {
	t.Helper()
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		resp, err := http.Get(url + "/")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET / answered %d", resp.StatusCode)
		}
		return nil
	}, "console at %s", url)
}

// client is a franz-go client of the server, closed with the test.
func (s *consoleServer) client(t *testing.T, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(s.Addr())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func (s *consoleServer) admin(t *testing.T) *kadm.Client {
	t.Helper()
	return kadm.NewClient(s.client(t))
}

// Names of what seed puts in the cluster.
const (
	ordersTopic  = "orders" // 3 partitions, keyed text records
	eventsTopic  = "events" // 1 partition, JSON values with headers
	binaryTopic  = "binary" // 1 partition, one value that is not UTF-8
	billingGroup = "billing"

	ordersPerPartition = 10
)

// binaryValue is not valid UTF-8 (and holds a NUL and markup).
var binaryValue = []byte{0xff, 0xfe, 0x00, '<', 'b', '>', 0xc3, 0x28}

// seed creates the topics, writes their records and commits offsets of
// the group billing (a group with no members, as a stopped consumer
// leaves it): 4 of orders-0, 7 of orders-1, none of orders-2.
func seed(t *testing.T, s *consoleServer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := s.admin(t)
	createTopic(ctx, t, adm, ordersTopic, 3)
	createTopic(ctx, t, adm, eventsTopic, 1)
	createTopic(ctx, t, adm, binaryTopic, 1)
	cl := s.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for p := range int32(3) {
		for i := range ordersPerPartition {
			recs = append(recs, &kgo.Record{Topic: ordersTopic, Partition: p,
				Key:   fmt.Appendf(nil, "customer-%d-%d", p, i),
				Value: fmt.Appendf(nil, "order %d of partition %d", i, p)})
		}
	}
	for i := range 5 {
		recs = append(recs, &kgo.Record{Topic: eventsTopic, Key: fmt.Appendf(nil, "evt-%d", i),
			Value:   fmt.Appendf(nil, `{"id":%d,"kind":"click","tags":["a","b"]}`, i),
			Headers: []kgo.RecordHeader{{Key: "source", Value: []byte("seed")}}})
	}
	recs = append(recs, &kgo.Record{Topic: binaryTopic, Key: []byte("bin"), Value: binaryValue})
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("seed produce: %v", err)
	}
	offsets := kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: ordersTopic, Partition: 0, At: 4, LeaderEpoch: -1})
	offsets.Add(kadm.Offset{Topic: ordersTopic, Partition: 1, At: 7, LeaderEpoch: -1})
	resp, err := adm.CommitOffsets(ctx, billingGroup, offsets)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("seed commit of group %s: %v", billingGroup, err)
	}
}

// createTopic creates topic and waits until every partition has a leader.
func createTopic(ctx context.Context, t *testing.T, adm *kadm.Client, topic string, partitions int32) {
	t.Helper()
	resp, err := adm.CreateTopic(ctx, partitions, 1, nil, topic)
	if err == nil && resp.Err != nil && !errors.Is(resp.Err, kerr.TopicAlreadyExists) {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	testutil.Eventually(t, 30*time.Second, func() bool { return topicLed(ctx, adm, topic, int(partitions)) },
		"topic %s led", topic)
}

// topicLed reports whether topic has n partitions, each with a leader.
func topicLed(ctx context.Context, adm *kadm.Client, topic string, n int) bool {
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return false
	}
	td := md.Topics[topic]
	if td.Err != nil || len(td.Partitions) != n {
		return false
	}
	for _, p := range td.Partitions {
		if p.Err != nil || p.Leader < 0 {
			return false
		}
	}
	return true
}

// committed is the group's committed offset of topic's partition, -1 when
// none.
func committed(t *testing.T, adm *kadm.Client, group, topic string, partition int32) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	resp, err := adm.FetchOffsets(ctx, group)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("fetch offsets of %s: %v", group, err)
	}
	o, ok := resp.Lookup(topic, partition)
	if !ok {
		return -1
	}
	return o.At
}

// topicExists asks the cluster's metadata whether topic exists.
func topicExists(t *testing.T, adm *kadm.Client, topic string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	topics, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatalf("list topics: %v", err)
	}
	return topics.Has(topic)
}
