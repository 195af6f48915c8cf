package metrics

import (
	"context"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/testcluster"
	"github.com/sluice-io/sluice/internal/testutil"
)

// Timings of the cluster under test: a stopped follower leaves the ISR
// after replicaLagMs, long before the controller would fence it
// (sessionTimeoutMs), so the partitions it leads keep it as their leader
// and only the ones it follows become under-replicated.
const (
	replicaLagMs     = 2000
	sessionTimeoutMs = 120000
)

// TestPrometheusScrapesCluster runs a real Prometheus against a real
// 3-node cluster and checks, through Prometheus's HTTP API, what the
// metrics must say: bytes in equal the batch bytes produced, consumer lag
// equals records produced minus committed, under-replicated partitions
// follow a SIGSTOPped broker and its SIGCONT, and exactly one node is the
// active controller. The alert rules are loaded and must evaluate cleanly.
func TestPrometheusScrapesCluster(t *testing.T) {
	if os.Getenv("SLUICE_PROMETHEUS_TEST") == "" {
		t.Skip("needs Debian's prometheus: make prometheus-test runs it (SLUICE_PROMETHEUS_TEST=1)")
	}
	promBin, promtool := prometheusBinary(t)
	exprs, _ := deployExpressions(t)
	promtoolCheckConfig(t, promtool)
	if n, alerts := promtoolRuleCount(t, promtool), countRules(exprs); n != alerts {
		t.Fatalf("promtool finds %d rules in %s, the name check reads %d", n, rulesPath, alerts)
	}

	c := testcluster.StartProcesses(t, binaryPath, testcluster.Options{Nodes: 3, Overrides: map[string]string{
		metricsListenerKey:                 "127.0.0.1:0",
		"replica.lag.time.max.ms":          strconv.Itoa(replicaLagMs),
		"broker.session.timeout.ms":        strconv.Itoa(sessionTimeoutMs),
		"broker.heartbeat.interval.ms":     "500",
		"offsets.topic.replication.factor": "3",
		"offsets.topic.num.partitions":     "3",
	}})
	targets := make([]string, len(c.Layout.Nodes))
	for i := range targets {
		targets[i] = metricsAddrOf(t, c, i)
	}
	prom := startPrometheus(t, promBin, targets)
	prom.awaitValue(t, 60*time.Second, `sum(up{job="sluice"})`, func(v float64) bool { return v == 3 }, "all 3 nodes scraped")

	addrs := c.Layout.BrokerAddrs()
	cl := newClient(t, addrs)
	adm := kadm.NewClient(cl)

	t.Run("ActiveControllerCount", func(t *testing.T) { checkActiveController(t, prom) })
	t.Run("BytesIn", func(t *testing.T) { checkBytesIn(t, prom, addrs, adm) })
	t.Run("ConsumerLag", func(t *testing.T) { checkConsumerLag(t, prom, cl, adm) })
	t.Run("UnderReplicated", func(t *testing.T) { checkUnderReplicated(t, prom, c, adm) })
	t.Run("RulesEvaluate", func(t *testing.T) { checkRulesHealthy(t, prom, countRules(exprs)) })
	t.Run("DashboardQueries", func(t *testing.T) { checkDashboardQueries(t, prom, exprs) })
}

// grafanaVariables are what Grafana would put in the dashboard's queries.
var grafanaVariables = strings.NewReplacer(
	"$__rate_interval", "1m", "$job", "sluice", "$topic", ".*", "$consumergroup", ".*")

// checkDashboardQueries runs every panel query of the dashboard, variables
// filled in as Grafana would, through Prometheus: each must parse and
// evaluate, and return data on this cluster, which has seen traffic (only
// the error panel may be empty: no request failed).
func checkDashboardQueries(t *testing.T, prom *promServer, exprs []expression) {
	for _, e := range exprs {
		if e.variable || !strings.HasPrefix(e.where, "panel ") {
			continue
		}
		q := grafanaVariables.Replace(e.expr)
		if strings.Contains(q, "$") {
			t.Errorf("%s: a variable the test does not know: %s", e.where, e.expr)
			continue
		}
		res, err := prom.query(q)
		switch {
		case err != nil:
			t.Errorf("%s: %v", e.where, err)
		case len(res) == 0 && !strings.Contains(q, `error!="NONE"`):
			t.Errorf("%s: no data for %s", e.where, q)
		}
	}
}

// countRules counts the alert and recording rules among exprs.
func countRules(exprs []expression) int {
	n := 0
	for _, e := range exprs {
		if strings.HasPrefix(e.where, "alert ") || strings.HasPrefix(e.where, "record ") {
			n++
		}
	}
	return n
}

// metricsAddrOf waits for node i's log line naming the address its
// metrics listener bound.
func metricsAddrOf(t *testing.T, c *testcluster.Processes, i int) string {
	t.Helper()
	pattern := regexp.MustCompile(`msg="console listening"[^\n]*? address=(\S+)[^\n]*` + regexp.QuoteMeta(metricsListenerKey))
	var addr string
	testutil.Eventually(t, 30*time.Second, func() bool {
		if m := pattern.FindStringSubmatch(c.Logs(i)); m != nil {
			addr = m[1]
		}
		return addr != ""
	}, "node %d never logged its metrics listener's address", i+1)
	return addr
}

// checkActiveController: summed over the nodes, activecontrollercount is 1,
// and every node (all are controllers) exports it.
func checkActiveController(t *testing.T, prom *promServer) {
	prom.awaitValue(t, 30*time.Second, `count(kafka_controller_kafkacontroller_activecontrollercount{job="sluice"})`,
		func(v float64) bool { return v == 3 }, "every controller exports activecontrollercount")
	prom.awaitValue(t, 30*time.Second, `sum(kafka_controller_kafkacontroller_activecontrollercount{job="sluice"})`,
		func(v float64) bool { return v == 1 }, "exactly one active controller")
}

// checkBytesIn produces N bytes of record batches and waits until the
// topic's bytesin_total, summed over the nodes (only leaders count client
// bytes), has grown by N within 5%, and its messagesin_total is the number
// of records.
func checkBytesIn(t *testing.T, prom *promServer, addrs []string, adm *kadm.Client) {
	const topic = "prom-bytes"
	createTopic(t, adm, topic, 3, 3, nil)
	q := fmt.Sprintf(`sum(kafka_server_brokertopicmetrics_bytesin_total{job="sluice",topic=%q}) or vector(0)`, topic)
	before, err := prom.scalar(q)
	if err != nil {
		t.Fatal(err)
	}
	hook := &batchBytes{}
	cl := newClient(t, addrs, kgo.WithHooks(hook), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(0))
	const rounds, perRound = 5, 400
	for range rounds {
		produce(t, cl, topic, perRound, 500)
	}
	n, batches := hook.total()
	if n < 1_000_000 || batches == 0 {
		t.Fatalf("produced %d bytes in %d batches, want at least 1 MB", n, batches)
	}
	got := prom.awaitValue(t, 30*time.Second, q, func(v float64) bool {
		return math.Abs(v-before-float64(n)) <= 0.05*float64(n)
	}, fmt.Sprintf("bytesin_total of %s grows by the %d batch bytes produced, within 5%%", topic, n))
	t.Logf("produced %d bytes in %d batches; bytesin_total{topic=%q} grew by %.0f", n, batches, topic, got-before)
	prom.awaitValue(t, 30*time.Second, fmt.Sprintf(`sum(kafka_server_brokertopicmetrics_messagesin_total{job="sluice",topic=%q})`, topic),
		func(v float64) bool { return v == rounds*perRound }, fmt.Sprintf("messagesin_total of %s is the %d records produced", topic, rounds*perRound))
	// The aggregate (no topic label) counts them too.
	agg, err := prom.scalar(`sum(kafka_server_brokertopicmetrics_bytesin_total{job="sluice",topic=""})`)
	if err != nil {
		t.Fatal(err)
	}
	if agg < float64(n)*0.95 {
		t.Errorf("aggregate bytesin_total is %.0f, below the %d bytes produced to %s alone", agg, n, topic)
	}
}

// checkConsumerLag produces M records, commits K of them for a group and
// waits until the broker-computed lag of the group on the topic is M-K.
func checkConsumerLag(t *testing.T, prom *promServer, cl *kgo.Client, adm *kadm.Client) {
	const topic, group = "prom-lag", "prom-lag-group"
	createTopic(t, adm, topic, 2, 3, nil)
	produce(t, cl, topic, 300, 50)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil || ends.Error() != nil {
		t.Fatalf("end offsets of %s: %v %v", topic, err, ends.Error())
	}
	var m, k int64
	offsets := kadm.Offsets{}
	ends.Each(func(o kadm.ListedOffset) {
		commit := o.Offset / 3 // a different share of each partition
		if o.Partition == 1 {
			commit = o.Offset * 2 / 3
		}
		m += o.Offset
		k += commit
		offsets.Add(kadm.Offset{Topic: topic, Partition: o.Partition, At: commit, LeaderEpoch: -1})
	})
	if m != 300 {
		t.Fatalf("end offsets of %s sum to %d, want the 300 records produced", topic, m)
	}
	resp, err := adm.CommitOffsets(ctx, group, offsets)
	if err != nil || resp.Error() != nil {
		t.Fatalf("commit %d offsets for %s: %v %v", k, group, err, resp.Error())
	}
	sel := fmt.Sprintf(`{job="sluice",consumergroup=%q,topic=%q}`, group, topic)
	prom.awaitValue(t, 30*time.Second, "sum(kafka_consumergroup_lag"+sel+")",
		func(v float64) bool { return v == float64(m-k) }, fmt.Sprintf("lag of %s is M-K = %d-%d", group, m, k))
	prom.awaitValue(t, 30*time.Second, "sum(kafka_consumergroup_lag_sum"+sel+")",
		func(v float64) bool { return v == float64(m-k) }, "lag_sum agrees")
	prom.awaitValue(t, 30*time.Second, "sum(kafka_consumergroup_current_offset"+sel+")",
		func(v float64) bool { return v == float64(k) }, "committed offsets sum to K")
}

// checkUnderReplicated SIGSTOPs a broker that is not the active controller
// and waits until the under-replicated partitions, summed over the nodes
// still scraped, equal the partitions led elsewhere whose ISR lost it; after
// SIGCONT they fall back to 0.
func checkUnderReplicated(t *testing.T, prom *promServer, c *testcluster.Processes, adm *kadm.Client) {
	const topic = "prom-urp"
	createTopic(t, adm, topic, 6, 3, nil)
	awaitFullISR(t, adm)
	prom.awaitValue(t, 30*time.Second, `sum(kafka_server_replicamanager_underreplicatedpartitions{job="sluice"})`,
		func(v float64) bool { return v == 0 }, "no under-replicated partition before the stop")

	stopped := pickNonController(t, prom, c)
	id := c.Layout.Nodes[stopped].ID
	pid := c.Pid(stopped)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				t.Errorf("SIGCONT node %d: %v", id, err)
			}
		}
	}
	defer resume()

	// Each partition that node id follows is under-replicated once its
	// leader drops id from the ISR; the ones id leads stay with their
	// stopped leader (it is not fenced), which no scrape reaches.
	var want int
	testutil.EventuallyNoError(t, 60*time.Second, func() error {
		followed, shrunk, err := followedPartitions(adm, id)
		if err != nil {
			return err
		}
		if followed == 0 {
			t.Fatalf("node %d follows no partition: the test needs some", id)
		}
		if shrunk != followed {
			return fmt.Errorf("%d of the %d partitions node %d follows dropped it from the ISR", shrunk, followed, id)
		}
		want = followed
		return nil
	}, "the ISRs drop the stopped node %d", id)
	t.Logf("node %d stopped; it follows %d partitions", id, want)
	prom.awaitValue(t, 30*time.Second, `sum(kafka_server_replicamanager_underreplicatedpartitions{job="sluice"})`,
		func(v float64) bool { return v == float64(want) }, fmt.Sprintf("under-replicated partitions rise to the %d node %d follows", want, id))
	awaitAlert(t, prom, "SluiceUnderReplicatedPartitions", "pending")
	awaitAlert(t, prom, "SluiceNodeDown", "pending")

	resume()
	prom.awaitValue(t, 60*time.Second, `sum(kafka_server_replicamanager_underreplicatedpartitions{job="sluice"})`,
		func(v float64) bool { return v == 0 }, fmt.Sprintf("under-replicated partitions back to 0 after node %d resumes", id))
	prom.awaitValue(t, 30*time.Second, `sum(up{job="sluice"})`, func(v float64) bool { return v == 3 }, "all 3 nodes scraped again")
}

// pickNonController returns the index of a node that Prometheus says is
// not the active controller.
func pickNonController(t *testing.T, prom *promServer, c *testcluster.Processes) int {
	t.Helper()
	res, err := prom.query(`kafka_controller_kafkacontroller_activecontrollercount{job="sluice"} == 1`)
	if err != nil || len(res) != 1 {
		t.Fatalf("active controller: %v %v", res, err)
	}
	for i := range c.Layout.Nodes {
		if metricsAddrOf(t, c, i) != res[0].labels["instance"] {
			return i
		}
	}
	t.Fatal("every node is the active controller")
	return 0
}

// followedPartitions counts, over every topic (internal ones included: the
// replica manager counts them), the partitions that have id among their
// replicas and another leader, and those of them whose ISR lacks id.
func followedPartitions(adm *kadm.Client, id int32) (followed, shrunk int, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	md, err := adm.Metadata(ctx)
	if err != nil {
		return 0, 0, err
	}
	for _, td := range md.Topics {
		for _, p := range td.Partitions {
			if p.Leader == id || !slices.Contains(p.Replicas, id) {
				continue
			}
			followed++
			if !slices.Contains(p.ISR, id) {
				shrunk++
			}
		}
	}
	return followed, shrunk, nil
}

// awaitFullISR waits until every partition's ISR holds all its replicas.
func awaitFullISR(t *testing.T, adm *kadm.Client) {
	t.Helper()
	testutil.EventuallyNoError(t, 60*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		md, err := adm.Metadata(ctx)
		if err != nil {
			return err
		}
		for _, td := range md.Topics {
			for _, p := range td.Partitions {
				if len(p.ISR) != len(p.Replicas) {
					return fmt.Errorf("%s-%d: ISR %v of replicas %v", td.Topic, p.Partition, p.ISR, p.Replicas)
				}
			}
		}
		return nil
	}, "every ISR complete")
}

// awaitAlert waits until Prometheus reports alert name in state (or
// firing, which follows pending).
func awaitAlert(t *testing.T, prom *promServer, name, state string) {
	t.Helper()
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		alerts, err := prom.alertStates()
		if err != nil {
			return err
		}
		for _, a := range alerts {
			if a.Labels["alertname"] == name && (a.State == state || a.State == "firing") {
				return nil
			}
		}
		return fmt.Errorf("active alerts %v", alerts)
	}, "alert %s %s", name, state)
}

// checkRulesHealthy: every rule of the alert file is loaded and its last
// evaluation on the real series succeeded.
func checkRulesHealthy(t *testing.T, prom *promServer, want int) {
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		health, err := prom.ruleHealth()
		if err != nil {
			return err
		}
		if len(health) != want {
			return fmt.Errorf("%d rules loaded, want %d: %v", len(health), want, health)
		}
		for name, h := range health {
			if h != "ok" {
				return fmt.Errorf("rule %s: %s", name, h)
			}
		}
		return nil
	}, "every alert rule evaluates")
}
