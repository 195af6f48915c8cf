package main

import (
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestTxnProduceRowsKeysAndLabels(t *testing.T) {
	specs := txnProduceSpecs(1)
	if len(specs) != 2 {
		t.Fatalf("%d transactional specs, want 1 and 16 partitions", len(specs))
	}
	var keys []string
	for _, sp := range specs {
		if !sp.AcksAll || sp.TxnDurationMs != 100 {
			t.Fatalf("spec %+v: a transactional producer is acks=all, idempotent, committing every 100 ms", sp)
		}
		keys = append(keys, produceRow(sp).Key, produceCPURow(sp).Key)
	}
	want := []string{"produce-txn100-p1", "cpu-produce-txn100-p1", "produce-txn100-p16", "cpu-produce-txn100-p16"}
	if !slices.Equal(keys, want) {
		t.Fatalf("keys %q, want %q", keys, want)
	}
	plain := produceSpec{AcksAll: true, Partitions: 1}
	if produceRow(plain).Key == produceRow(specs[0]).Key {
		t.Fatal("the transactional row shares its key with the plain acks=all row")
	}
	label := specs[0].label()
	for _, part := range []string{"transactional", "--transaction-duration-ms 100", "acks=all, idempotent", "1 partition"} {
		if !strings.Contains(label, part) {
			t.Errorf("label %q does not say %q", label, part)
		}
	}
	if r := txnOverPlainRow(specs[1]); r.Key != "txn-over-plain-txn100-p16" || !r.HigherIsBetter || !strings.Contains(r.Label, "16 partitions") {
		t.Fatalf("transactional over plain row %+v", r)
	}
	cluster := txnProduceSpecs(3)[1]
	if produceRow(cluster).Key != "produce-txn100-p16-3n" || !strings.Contains(cluster.label(), "3 nodes, RF=3") {
		t.Fatalf("3-node row %q / %q", produceRow(cluster).Key, cluster.label())
	}
}

func TestWindowedProducerArgs(t *testing.T) {
	spec := produceSpec{AcksAll: true, Partitions: 16, TxnDurationMs: 100}
	args := windowedProducerArgs("127.0.0.1:9092", "perf-txn100-p16", spec)
	joined := strings.Join(args, " ")
	if !strings.Contains(joined, "--transactional-id bench-perf-txn100-p16 --transaction-duration-ms 100 --command-property acks=all enable.idempotence=true") {
		t.Fatalf("args %q: the transaction flags must come before --command-property, which takes what follows it", joined)
	}
	plain := strings.Join(windowedProducerArgs("127.0.0.1:9092", "perf-acksall-p16", produceSpec{AcksAll: true, Partitions: 16}), " ")
	if strings.Contains(plain, "transaction") {
		t.Fatalf("a plain run got transaction flags: %q", plain)
	}
	if !strings.HasSuffix(plain, "--command-property acks=all enable.idempotence=true") {
		t.Fatalf("plain args %q", plain)
	}
}

// The transactional producer-perf-test prints the same progress lines as a plain one
// (these are from a run of Kafka 4.4.0's tool with --transaction-duration-ms 100).
func TestScanWindowsOfTransactionalRun(t *testing.T) {
	out := strings.Join([]string{
		"1281 records sent, 1279.7 records/sec (1.25 MB/sec), 67.8 ms avg latency, 251.0 ms max latency.",
		"16818 records sent, 16751.0 records/sec (16.36 MB/sec), 42.0 ms avg latency, 155.0 ms max latency.",
		"38027 records sent, 37762.7 records/sec (36.88 MB/sec), 33.5 ms avg latency, 162.0 ms max latency.",
		"70503 records sent, 70432.6 records/sec (68.78 MB/sec), 13.1 ms avg latency, 51.0 ms max latency.",
		"200000 records sent, 40096.230954 records/sec (39.16 MB/sec), 26.50 ms avg latency, 251.00 ms max latency, 13 ms 50th, 107 ms 95th, 138 ms 99th, 157 ms 99.9th.",
	}, "\n")
	run, err := scanWindows(strings.NewReader(out), []int{os.Getpid()}, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	if run.Stats.Records != 38027+70503 {
		t.Fatalf("measured %d records, want the third and fourth windows'", run.Stats.Records)
	}
}

func TestEndTxnRowsKeysAndLabels(t *testing.T) {
	got := []string{endTxnRow("p50", 1).Key, endTxnRow("p99", 1).Key, txnRateRow(1).Key, endTxnRow("p99", 3).Key, txnRateRow(3).Key}
	want := []string{"endtxn-p50", "endtxn-p99", "txn-rate", "endtxn-p99-3n", "txn-rate-3n"}
	if !slices.Equal(got, want) {
		t.Fatalf("keys %q, want %q", got, want)
	}
	if r := endTxnRow("p99", 1); r.HigherIsBetter || r.Unit != "ms" || !strings.Contains(r.Label, "EndTxn") {
		t.Fatalf("latency row %+v", r)
	}
	if !txnRateRow(1).HigherIsBetter {
		t.Fatal("the transaction rate reads higher is better")
	}
	if l := endTxnRow("p50", 3).Label; !strings.Contains(l, "3 nodes, RF=3, min.insync.replicas=2") {
		t.Fatalf("3-node label %q", l)
	}
}

func TestPercentileNearestRank(t *testing.T) {
	var vs []float64
	for i := 100; i >= 1; i-- {
		vs = append(vs, float64(i))
	}
	if p := percentile(vs, 50); p != 50 {
		t.Errorf("p50 of 1..100 = %v", p)
	}
	if p := percentile(vs, 99); p != 99 {
		t.Errorf("p99 of 1..100 = %v", p)
	}
	if p := percentile(vs, 100); p != 100 {
		t.Errorf("p100 of 1..100 = %v", p)
	}
	if vs[0] != 100 {
		t.Error("percentile sorted its input in place")
	}
	// Few samples: p99 of 10 values is the largest, not an interpolation.
	if p := percentile([]float64{3, 1, 2, 9, 4, 5, 6, 7, 8, 10}, 99); p != 10 {
		t.Errorf("p99 of 10 values = %v", p)
	}
	if p := percentile([]float64{7}, 50); p != 7 {
		t.Errorf("p50 of one value = %v", p)
	}
	if !math.IsNaN(percentile(nil, 50)) {
		t.Error("percentile of nothing is a number")
	}
}

func TestParsePhases(t *testing.T) {
	got, err := parsePhases("txn")
	if err != nil || !got["txn"] || got["produce"] || len(got) != 1 {
		t.Fatalf("parsePhases(txn) = %v, %v", got, err)
	}
	got, err = parsePhases("produce, catch-up,txn,tls,pprof")
	if err != nil || len(got) != 5 {
		t.Fatalf("all phases: %v, %v", got, err)
	}
	for _, bad := range []string{"", "txns", "produce,,txn", "produce,fill"} {
		if _, err := parsePhases(bad); err == nil {
			t.Errorf("parsePhases(%q) accepted", bad)
		}
	}
}

func TestRequestTallyCountsWhileOn(t *testing.T) {
	var tally requestTally
	e2e := kgo.BrokerE2E{ReadWait: 2 * time.Millisecond}
	tally.OnBrokerE2E(kgo.BrokerMetadata{}, keyEndTxn, e2e)
	tally.set(true)
	tally.OnBrokerE2E(kgo.BrokerMetadata{}, keyProduce, e2e)
	tally.OnBrokerE2E(kgo.BrokerMetadata{}, keyProduce, e2e)
	tally.OnBrokerE2E(kgo.BrokerMetadata{}, keyEndTxn, e2e)
	tally.OnBrokerE2E(kgo.BrokerMetadata{}, 3, e2e) // Metadata: not counted
	tally.set(false)
	tally.OnBrokerE2E(kgo.BrokerMetadata{}, keyProduce, e2e)
	c := tally.snapshot()
	if c.Produce != 2 || c.EndTxn != 1 || len(c.EndTxnRTT) != 1 || c.EndTxnRTT[0] != 2*time.Millisecond {
		t.Fatalf("counts %+v", c)
	}
}

func TestEndTxnRunFigures(t *testing.T) {
	run := endTxnRun{
		Warmed:  20,
		Commits: []time.Duration{time.Millisecond, 3 * time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond},
		Elapsed: 2 * time.Second,
		Wire:    requestCounts{Produce: 6, EndTxn: 4, EndTxnRTT: []time.Duration{time.Millisecond}},
	}
	if r := run.ratePerSec(); r != 2 {
		t.Fatalf("rate %v, want 4 transactions in 2 s", r)
	}
	if ms := run.commitMs(); !slices.Equal(ms, []float64{1, 3, 2, 4}) {
		t.Fatalf("commit ms %v", ms)
	}
	cfg := endTxnLoopConfig{Measure: 300, MaxSeconds: 30}
	d := run.describe(cfg)
	for _, part := range []string{"4 of 300 transactions measured after 20 warm-up", "1.50 Produce and 1.00 EndTxn requests", "max 4.00 ms", "EndTxn on the wire p50 1.00"} {
		if !strings.Contains(d, part) {
			t.Errorf("describe %q lacks %q", d, part)
		}
	}
	if strings.Contains(d, "limit") {
		t.Errorf("a loop that finished says it hit the limit: %q", d)
	}
	run.TimedOut = true
	if d := run.describe(cfg); !strings.Contains(d, "stopped at the 30 s limit") {
		t.Errorf("a timed-out loop does not say so: %q", d)
	}
	if (endTxnRun{}).ratePerSec() != 0 {
		t.Error("a loop that measured nothing has a rate")
	}
}

func TestReportDescribesOnlyThePhasesRun(t *testing.T) {
	prof, err := profileNamed("quick")
	if err != nil {
		t.Fatal(err)
	}
	res := newResults()
	res.add(endTxnRow("p99", 1), sysSluice, 1, 1.5, "0.1 0.1 0.1")
	res.add(endTxnRow("p99", 1), sysKafka, 1, 3, "0.1 0.1 0.1")
	out := renderReport(runInfo{Prof: prof, Phases: map[string]bool{"txn": true}}, res)
	if !strings.Contains(out, "--transaction-duration-ms 100") || !strings.Contains(out, "EndTransaction(TryCommit)") {
		t.Fatal("the report does not say how the transaction rows were measured")
	}
	if strings.Contains(out, "Fixed-rate latency:") {
		t.Fatal("a transactions-only report describes the fixed-rate run")
	}
	if !strings.Contains(out, "| 1.50 | 3.00 | 0.50 | lower |") {
		t.Fatalf("EndTxn row not in the table:\n%s", out)
	}
	full := renderReport(runInfo{Prof: prof, Phases: map[string]bool{"produce": true, "catch-up": true}}, newResults())
	if !strings.Contains(full, "Fixed-rate latency:") || strings.Contains(full, "EndTransaction(TryCommit)") {
		t.Fatal("a report without the txn phase describes the wrong rows")
	}
}

func TestWorstProduceSpecConsidersTransactionalRows(t *testing.T) {
	s := &suite{res: newResults()}
	plain := produceSpec{AcksAll: true, Partitions: 16}
	txn := txnProduceSpecs(1)[0]
	s.res.add(produceRow(plain), sysSluice, 1, 90, "")
	s.res.add(produceRow(plain), sysKafka, 1, 100, "")
	s.res.add(produceRow(txn), sysSluice, 1, 120, "")
	s.res.add(produceRow(txn), sysKafka, 1, 100, "")
	if got, _ := s.worstProduceSpec(); got != plain {
		t.Fatalf("worst %+v, want the plain row at 0.90", got)
	}
	s.res.add(produceRow(txn), sysSluice, 2, 50, "")
	s.res.add(produceRow(txn), sysSluice, 3, 50, "")
	if got, why := s.worstProduceSpec(); got != txn || !strings.Contains(why, "0.50") {
		t.Fatalf("worst %+v (%s), want the transactional row at 0.50", got, why)
	}
}
