package node

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/testbin"
)

// The produce benchmark's sizes; its command is in docs/benchmarks.md
// ("Metrics").
var (
	produceRounds  = flag.Int("produce.rounds", 15, "BenchmarkProduceMetrics: rounds, each producing once to each node per acks setting")
	produceRecords = flag.Int("produce.records", 100000, "BenchmarkProduceMetrics: 1 KiB records per measurement")
	produceBatch   = flag.Int("produce.batch", 0, "BenchmarkProduceMetrics: kgo's ProducerBatchMaxBytes (smaller batches, more requests a byte); 0 keeps kgo's default")
	produceAA      = flag.Bool("produce.aa", false, "BenchmarkProduceMetrics: both nodes record (an A/A run: the setup's own difference between the two nodes)")
	produceDir     = flag.String("produce.dir", "", "BenchmarkProduceMetrics: where the nodes' log dirs go (e.g. /dev/shm, so no disk hides CPU); default the test's temp dir")
)

// benchDir is a new directory under *produceDir, or the test's.
func benchDir(b *testing.B) string {
	b.Helper()
	if *produceDir == "" {
		return b.TempDir()
	}
	dir, err := os.MkdirTemp(*produceDir, "sluice-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// benchNode is a running node of a benchmark.
type benchNode struct {
	n        *Node
	addr     string
	registry *prometheus.Registry
}

// startBenchNode runs a single combined node with its data in dir on free
// ports; extra adds configuration, before runs between New and Run. The
// node stops in b.Cleanup.
func startBenchNode(b *testing.B, dir string, extra map[string]string, before func(*Node)) *benchNode {
	b.Helper()
	ports, err := testbin.FreePorts(2)
	if err != nil {
		b.Fatal(err)
	}
	props := map[string]string{
		"log.dirs":                 dir,
		"listeners":                fmt.Sprintf("PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:%d", ports[0]),
		"controller.quorum.voters": fmt.Sprintf("1@127.0.0.1:%d", ports[0]),
	}
	for k, v := range extra {
		props[k] = v
	}
	cfg, err := config.Parse("", props)
	if err != nil {
		b.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	if *scrapeGathered {
		// A registry holding a series already is served gathered
		// (listCollectors).
		reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "sluice_bench_gathered", Help: "Set by BenchmarkScrape -scrape.gathered."}))
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	n, err := New(cfg, logger, reg)
	if err != nil {
		b.Fatal(err)
	}
	if before != nil {
		before(n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	select {
	case <-n.Ready():
	case err := <-done:
		cancel()
		b.Fatalf("node stopped at start: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		b.Fatal("node not ready after 60s")
	}
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Errorf("node stop: %v", err)
		}
	})
	return &benchNode{n: n, addr: n.Addr("PLAINTEXT").String(), registry: reg}
}

// stopRecording turns off the request path's RequestMetrics and the data
// path's BrokerTopicMetrics of a node not yet running: the "off" side of
// BenchmarkProduceMetrics.
func stopRecording(n *Node) {
	n.broker.server.DisableRequestMetrics()
	n.broker.replicas.DisableMetrics()
}

// offSwitch is what the "off" node runs before it starts: stopRecording,
// or nothing in an A/A run.
func offSwitch() func(*Node) {
	if *produceAA {
		return nil
	}
	return stopRecording
}

// createBenchTopic creates topic with partitions partitions (RF 1).
func createBenchTopic(b *testing.B, addr, topic string, partitions int32) {
	b.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopic(context.Background(), partitions, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		b.Fatalf("create %s: %v", topic, err)
	}
}

// producerSide is one node's producer for one acks setting.
type producerSide struct {
	name string
	cl   *kgo.Client
}

// produceRound produces records 1 KiB records through p and returns the
// rate in MiB/s, from the first Produce to the last acknowledgement.
func produceRound(b *testing.B, p producerSide, topic string, records int) float64 {
	b.Helper()
	values := randomValues(b, 256)
	errs := make(chan error, 1)
	start := time.Now()
	for i := range records {
		p.cl.Produce(context.Background(), &kgo.Record{Topic: topic, Value: values[i%len(values)]}, func(_ *kgo.Record, err error) {
			if err != nil {
				select {
				case errs <- err:
				default:
				}
			}
		})
	}
	if err := p.cl.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	select {
	case err := <-errs:
		b.Fatalf("%s: %v", p.name, err)
	default:
	}
	return float64(records) / 1024 / elapsed.Seconds()
}

// randomValues are n random 1 KiB values.
func randomValues(b *testing.B, n int) [][]byte {
	b.Helper()
	buf := make([]byte, n*1024)
	if _, err := rand.Read(buf); err != nil {
		b.Fatal(err)
	}
	values := make([][]byte, n)
	for i := range values {
		values[i] = buf[i*1024 : (i+1)*1024 : (i+1)*1024]
	}
	return values
}

// BenchmarkProduceMetrics measures the produce path end to end with metric
// recording on and off, in one process: two single nodes run side by side,
// one recording as shipped, the other with the request path's
// RequestMetrics and the data path's BrokerTopicMetrics off (stopRecording;
// its socket byte counters and request timestamps stay). A kgo producer
// per node and acks setting (acks=all idempotent, acks=1 not) sends random 1 KiB
// records uncompressed to a 4-partition topic, batched as kgo batches them. Each round
// measures every setting on both nodes, the order of on and off swapped
// every round; the medians and their ratio are reported:
//
//	go test -run '^$' -bench ProduceMetrics -benchtime 1x ./internal/node
func BenchmarkProduceMetrics(b *testing.B) {
	// Retention keeps the disk bounded over the rounds; both nodes delete
	// alike.
	bounded := map[string]string{
		"log.segment.bytes":               fmt.Sprint(16 << 20),
		"log.retention.bytes":             fmt.Sprint(48 << 20),
		"log.retention.check.interval.ms": "1000",
		"file.delete.delay.ms":            "1000",
	}
	nodes := map[string]*benchNode{
		"on":  startBenchNode(b, benchDir(b), bounded, nil),
		"off": startBenchNode(b, benchDir(b), bounded, offSwitch()),
	}
	const topic = "bench"
	sides := map[string]producerSide{}
	for state, bn := range nodes {
		createBenchTopic(b, bn.addr, topic, 4)
		for _, acks := range []string{"all", "1"} {
			// Uncompressed random values, as Kafka's producer perf test
			// sends by default.
			opts := []kgo.Opt{kgo.SeedBrokers(bn.addr), kgo.ProducerBatchCompression(kgo.NoCompression())}
			if *produceBatch > 0 {
				opts = append(opts, kgo.ProducerBatchMaxBytes(int32(*produceBatch)))
			}
			if acks == "1" {
				opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
			}
			cl, err := kgo.NewClient(opts...)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(cl.Close)
			name := "acks=" + acks + "/metrics=" + state
			sides[name] = producerSide{name: name, cl: cl}
			produceRound(b, sides[name], topic, 2000) // connections and metadata warm
		}
	}
	rates := map[string][]float64{}
	for b.Loop() {
		for r := range *produceRounds {
			order := []string{"on", "off"}
			if r%2 == 1 {
				slices.Reverse(order)
			}
			for _, acks := range []string{"all", "1"} {
				for _, state := range order {
					name := "acks=" + acks + "/metrics=" + state
					rates[name] = append(rates[name], produceRound(b, sides[name], topic, *produceRecords))
				}
			}
		}
	}
	reportProduceMetrics(b, rates)
	checkRecording(b, nodes)
}

// reportProduceMetrics logs each side's rates and reports the medians and
// the cost of recording (1 - on/off) per acks setting.
func reportProduceMetrics(b *testing.B, rates map[string][]float64) {
	b.Helper()
	for _, acks := range []string{"all", "1"} {
		on, off := rates["acks="+acks+"/metrics=on"], rates["acks="+acks+"/metrics=off"]
		mOn, mOff := median(on), median(off)
		b.Logf("acks=%s on  MiB/s: %.1f (median %.1f)", acks, on, mOn)
		b.Logf("acks=%s off MiB/s: %.1f (median %.1f)", acks, off, mOff)
		// A round's on and off ran back to back, under one load.
		paired := make([]float64, len(on))
		for i := range on {
			paired[i] = on[i] / off[i]
		}
		b.Logf("acks=%s on/off of the medians %.3f (cost %.1f%%); median of the rounds' on/off %.3f (cost %.1f%%)",
			acks, mOn/mOff, 100*(1-mOn/mOff), median(paired), 100*(1-median(paired)))
		b.ReportMetric(mOn, "acks="+acks+"-on-MiB/s")
		b.ReportMetric(mOff, "acks="+acks+"-off-MiB/s")
		b.ReportMetric(100*(1-mOn/mOff), "acks="+acks+"-cost-%")
		b.ReportMetric(100*(1-median(paired)), "acks="+acks+"-paired-cost-%")
	}
}

// checkRecording fails unless the "on" node counted the produced bytes and
// the "off" node counted none: the comparison measures what it says.
func checkRecording(b *testing.B, nodes map[string]*benchNode) {
	b.Helper()
	on, _ := nodes["on"].n.broker.replicas.BrokerTopicStats().Snapshot()
	off, _ := nodes["off"].n.broker.replicas.BrokerTopicStats().Snapshot()
	if *produceAA {
		return
	}
	if on.BytesIn == 0 || off.BytesIn != 0 {
		b.Fatalf("bytes in counted: on %d, off %d; want some and none", on.BytesIn, off.BytesIn)
	}
	requests := familySum(b, nodes["on"].registry, "kafka_network_requestmetrics_requests_total", "request", "Produce")
	b.Logf("metrics=on: %d records in %.0f Produce requests (%.1f a request)", on.MessagesIn, requests, float64(on.MessagesIn)/requests)
	for state, want := range map[string]bool{"on": true, "off": false} {
		got := gatheredFamily(b, nodes[state].registry, "kafka_network_requestmetrics_requests_total")
		if got != want {
			b.Fatalf("metrics=%s: requests_total present %v, want %v", state, got, want)
		}
	}
}

// familySum sums the counters of family name whose label has value.
func familySum(b *testing.B, g prometheus.Gatherer, name, label, value string) float64 {
	b.Helper()
	families, err := g.Gather()
	if err != nil {
		b.Fatal(err)
	}
	var sum float64
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.Metric {
			for _, l := range m.Label {
				if l.GetName() == label && l.GetValue() == value {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

// gatheredFamily reports whether g has a series of family name.
func gatheredFamily(b *testing.B, g prometheus.Gatherer, name string) bool {
	b.Helper()
	families, err := g.Gather()
	if err != nil {
		b.Fatal(err)
	}
	for _, mf := range families {
		if mf.GetName() == name && len(mf.Metric) > 0 {
			return true
		}
	}
	return false
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
