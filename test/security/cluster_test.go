package security

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/auth/tlsconf/tlstest"
	"github.com/sluice-io/sluice/internal/testcluster"
	"github.com/sluice-io/sluice/internal/testutil"
)

// Three combined nodes whose every listener is SSL with
// ssl.client.auth=required: the quorum (raft over the CONTROLLER
// listener's TLS), broker registration, heartbeats and forwarding (the
// controller listener's TLS), and replication (the inter-broker
// listener's TLS, the broker keystore as client certificate) all run over
// mutual TLS. A topic with three replicas is written, its leader is
// killed with SIGKILL, and every acknowledged record is read back from the
// survivors, to which writes go on.
func TestClusterOverMutualTLS(t *testing.T) {
	p := newPKI(t)
	overrides := map[string]string{
		// The layout's listener names, mapped to SSL.
		"listener.security.protocol.map": "PLAINTEXT:SSL,CONTROLLER:SSL",
		"broker.session.timeout.ms":      "3000",
		"broker.heartbeat.interval.ms":   "500",
		"min.insync.replicas":            "2",
	}
	for _, kv := range p.brokerSSL(t, "required") {
		k, v, _ := strings.Cut(kv, "=")
		overrides[k] = v
	}
	c := testcluster.StartProcesses(t, binaryPath, testcluster.Options{Nodes: 3, Overrides: overrides})
	addrs := c.Layout.BrokerAddrs()
	app := p.issue(t, tlstest.LeafOptions{Subject: "CN=app,OU=eng"})
	tlsOpt := kgo.DialTLSConfig(p.clientTLS(app))
	cl := client(t, addrs[0], kgo.SeedBrokers(addrs...), tlsOpt)
	adm := kadm.NewClient(cl)
	const topic = "replicated"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := createTopic(ctx, cl, topic, 1, 3); err != nil {
		t.Fatal(err)
	}
	testutil.EventuallyNoError(t, 30*time.Second, func() error { return fullISR(adm, topic, 3) }, "ISR of 3 over TLS")

	produce := func(from, to int) {
		t.Helper()
		prod := client(t, addrs[0], kgo.SeedBrokers(addrs...), tlsOpt)
		for i := from; i < to; i++ {
			testutil.EventuallyNoError(t, 30*time.Second, func() error {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				return prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(strconv.Itoa(i))}).FirstErr()
			}, "produce record %d", i)
		}
	}
	produce(0, 200)

	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	leader := md.Topics[topic].Partitions[0].Leader
	t.Logf("killing node %d, the partition's leader", leader)
	c.Kill(int(leader) - 1)
	var survivors []string
	for i, a := range addrs {
		if int32(i+1) != leader {
			survivors = append(survivors, a)
		}
	}
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		md, err := kadm.NewClient(client(t, survivors[0], kgo.SeedBrokers(survivors...), tlsOpt)).Metadata(context.Background(), topic)
		if err != nil {
			return err
		}
		if l := md.Topics[topic].Partitions[0].Leader; l == leader || l < 0 {
			return fmt.Errorf("leader still %d", l)
		}
		return nil
	}, "a new leader after the kill")
	addrs = survivors
	produce(200, 400)

	cons := client(t, survivors[0], kgo.SeedBrokers(survivors...), tlsOpt, kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := map[string]bool{}
	for len(seen) < 400 {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of 400 acknowledged records", len(seen))
		}
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
	}
}

// fullISR checks that partition 0 of topic has n replicas in sync.
func fullISR(adm *kadm.Client, topic string, n int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return err
	}
	pd := md.Topics[topic].Partitions[0]
	if len(pd.ISR) != n {
		return fmt.Errorf("ISR %v", pd.ISR)
	}
	return nil
}
