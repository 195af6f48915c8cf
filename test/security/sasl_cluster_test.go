package security

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/sluice-io/sluice/internal/testbin"
	"github.com/sluice-io/sluice/internal/testcluster"
	"github.com/sluice-io/sluice/internal/testutil"
)

// Three combined nodes whose broker (inter-broker) and CONTROLLER
// listeners are SASL_SSL: replication authenticates with SCRAM-SHA-512 as
// the user `sluice storage format --add-scram` bootstrapped (Kafka's
// kafka-storage format --add-scram), the controller traffic (raft,
// registration, heartbeats, forwarding) with PLAIN (SCRAM's credentials
// live in the metadata log the controllers replicate). A client
// authenticating with SCRAM writes a topic of three replicas, the leader is
// killed with SIGKILL, and every acknowledged record is read back.
func TestClusterOverSASLSSL(t *testing.T) {
	p := newPKI(t)
	overrides := map[string]string{
		"listener.security.protocol.map":                         "PLAINTEXT:SASL_SSL,CONTROLLER:SASL_SSL",
		"listener.name.plaintext.sasl.enabled.mechanisms":        "SCRAM-SHA-512",
		"listener.name.controller.sasl.enabled.mechanisms":       "PLAIN",
		"sasl.mechanism.inter.broker.protocol":                   "SCRAM-SHA-512",
		"sasl.mechanism.controller.protocol":                     "PLAIN",
		"listener.name.plaintext.scram-sha-512.sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="broker" password="broker-secret-9";`,
		"listener.name.controller.plain.sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required ` +
			`username="controller" password="controller-secret-9" user_controller="controller-secret-9";`,
		"broker.session.timeout.ms":    "3000",
		"broker.heartbeat.interval.ms": "500",
		"min.insync.replicas":          "2",
	}
	for _, kv := range p.brokerSSL(t, "none") {
		k, v, _ := strings.Cut(kv, "=")
		overrides[k] = v
	}
	layout, err := testcluster.NewLayout(t.TempDir(), testcluster.Options{Nodes: 3, Overrides: overrides})
	if err != nil {
		t.Fatal(err)
	}
	procs := make([]*testbin.Process, len(layout.Nodes))
	t.Cleanup(func() {
		for _, pr := range procs {
			if pr != nil {
				pr.Kill()
			}
		}
	})
	for i, n := range layout.Nodes {
		args := nodeArgs(layout, i)
		// NewLayout formatted the dir; format it again as an operator
		// would, with the SCRAM users the cluster starts with.
		if err := os.Remove(filepath.Join(n.LogDir, "meta.properties")); err != nil {
			t.Fatal(err)
		}
		format := append([]string{"storage", "format", "--cluster-id", layout.ClusterID, "--config", "",
			"--add-scram", "SCRAM-SHA-512=[name=broker,password=broker-secret-9]",
			"--add-scram", "SCRAM-SHA-512=[name=app,password=app-secret-9]"}, args[1:]...)
		if out, err := exec.Command(binaryPath, format...).CombinedOutput(); err != nil {
			t.Fatalf("format node %d: %v\n%s", n.ID, err, out)
		}
	}
	for i, n := range layout.Nodes {
		procs[i] = testbin.StartProcess(t, fmt.Sprintf("node %d", n.ID), binaryPath, nodeArgs(layout, i)...)
	}
	for i := range layout.Nodes {
		awaitStarted(t, procs[i], 90*time.Second)
	}

	addrs := layout.BrokerAddrs()
	opts := []kgo.Opt{kgo.SeedBrokers(addrs...), kgo.DialTLSConfig(p.clientTLS(nil)),
		kgo.SASL(scram.Auth{User: "app", Pass: "app-secret-9"}.AsSha512Mechanism())}
	cl := client(t, addrs[0], opts...)
	adm := kadm.NewClient(cl)
	const topic = "replicated"
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := createTopic(ctx, cl, topic, 1, 3); err != nil {
		t.Fatal(err)
	}
	testutil.EventuallyNoError(t, 30*time.Second, func() error { return fullISR(adm, topic, 3) }, "ISR of 3 over SASL_SSL")

	produce := func(seeds []string, from, to int) {
		t.Helper()
		prod := client(t, seeds[0], append(opts, kgo.SeedBrokers(seeds...))...)
		for i := from; i < to; i++ {
			testutil.EventuallyNoError(t, 30*time.Second, func() error {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				return prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(strconv.Itoa(i))}).FirstErr()
			}, "produce record %d", i)
		}
	}
	produce(addrs, 0, 200)

	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	leader := md.Topics[topic].Partitions[0].Leader
	t.Logf("killing node %d, the partition's leader", leader)
	if err := procs[leader-1].Kill(); err != nil {
		t.Fatal(err)
	}
	procs[leader-1] = nil
	var survivors []string
	for i, a := range addrs {
		if int32(i+1) != leader {
			survivors = append(survivors, a)
		}
	}
	surv := append(opts, kgo.SeedBrokers(survivors...))
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		md, err := kadm.NewClient(client(t, survivors[0], surv...)).Metadata(context.Background(), topic)
		if err != nil {
			return err
		}
		if l := md.Topics[topic].Partitions[0].Leader; l == leader || l < 0 {
			return fmt.Errorf("leader still %d", l)
		}
		return nil
	}, "a new leader after the kill")
	produce(survivors, 200, 400)

	cons := client(t, survivors[0], append(surv, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	seen := map[string]bool{}
	for len(seen) < 400 {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of 400 acknowledged records", len(seen))
		}
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
	}
}

// nodeArgs are `sluice server` and node i's properties as overrides.
func nodeArgs(l *testcluster.Layout, i int) []string {
	props := l.Properties(i)
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	args := []string{"server"}
	for _, k := range keys {
		args = append(args, "--override", k+"="+props[k])
	}
	return args
}

// awaitStarted waits until the process logs that it serves.
func awaitStarted(t *testing.T, pr *testbin.Process, timeout time.Duration) {
	t.Helper()
	testutil.EventuallyNoError(t, timeout, func() error {
		if exited, err := pr.Exited(); exited {
			t.Fatalf("node exited while starting: %v\n%s", err, pr.Logs())
		}
		if !strings.Contains(pr.Logs(), `msg="node started"`) {
			return fmt.Errorf("not started")
		}
		return nil
	}, "node started")
}
