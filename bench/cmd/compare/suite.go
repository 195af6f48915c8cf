package main

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// profile fixes every size and duration of a run.
type profile struct {
	Name        string
	Rounds      int
	BrokerWarm  int   // seconds of full-speed produce that warm a fresh broker (Kafka's JIT) before any measured run
	Warm        int   // warm-up windows (seconds) of a full-speed produce run
	Measure     int   // measurement windows (seconds) of a full-speed produce run
	RateWarm    int   // warm-up seconds of the fixed-rate run: past the producer JVM's start-up backlog (about 4 s with Sluice, 8-13 s with Kafka on 2 cores; bench/ops/tail-timeline), so the row measures the broker
	RateMeasure int   // measured seconds of the fixed-rate run
	FillBytes   int64 // log written before the catch-up read and the restarts
	IperfSecs   int
	Nodes       []int // cluster sizes: 1 is every single-broker row, 3 the 3-node rows
	TxnWarm     int   // transactions of the EndTxn latency loop not measured
	TxnMeasure  int   // transactions measured after them...
	TxnMaxSecs  int   // ...unless the loop has run this long (a stalling broker)
}

func profileNamed(name string) (profile, error) {
	switch name {
	case "quick":
		return profile{Name: name, Rounds: 3, BrokerWarm: 4, Warm: 2, Measure: 4, RateWarm: 10, RateMeasure: 5, FillBytes: 256 << 20, IperfSecs: 3, Nodes: []int{1},
			TxnWarm: 20, TxnMeasure: 300, TxnMaxSecs: 30}, nil
	case "full":
		return profile{Name: name, Rounds: 3, BrokerWarm: 15, Warm: 5, Measure: 20, RateWarm: 15, RateMeasure: 30, FillBytes: 2 << 30, IperfSecs: 10, Nodes: []int{1, 3},
			TxnWarm: 100, TxnMeasure: 2000, TxnMaxSecs: 120}, nil
	}
	return profile{}, fmt.Errorf("unknown profile %q (quick or full)", name)
}

// parseNodes reads --nodes: distinct cluster sizes, 1 or 3, in the order given.
func parseNodes(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || (n != 1 && n != 3) {
			return nil, fmt.Errorf("--nodes: %q is not 1 or 3", f)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// parseSystems reads --systems and answers the systems not named, whose sessions are
// skipped.
func parseSystems(list string) (map[system]bool, error) {
	skip := map[system]bool{sysSluice: true, sysKafka: true}
	for _, f := range strings.Split(list, ",") {
		switch strings.ToLower(strings.TrimSpace(f)) {
		case "sluice":
			delete(skip, sysSluice)
		case "kafka":
			delete(skip, sysKafka)
		default:
			return nil, fmt.Errorf("--systems: %q is not sluice or kafka", f)
		}
	}
	return skip, nil
}

// phaseNames are the phases --phases may name, in the order a run makes them.
var phaseNames = []string{"produce", "catch-up", "txn", "tls", "groups", "omb", "compression", "connections", "partitions", "pprof"}

// defaultPhases are the phases a profile runs without --phases: the full profile adds the
// TLS, omb, compression, connections and partitions phases, which would take the quick profile well
// past its 10 minutes (issue 24 asks for their rows in the full profile's results).
func defaultPhases(profile string) string {
	if profile == "full" {
		return "produce,catch-up,txn,tls,omb,compression,connections,partitions"
	}
	return "produce,catch-up,txn"
}

// parsePhases reads --phases: a set of known phase names (a misspelt one is an error, not
// a run that silently measures nothing).
func parsePhases(list string) (map[string]bool, error) {
	want := make(map[string]bool)
	for _, f := range strings.Split(list, ",") {
		ph := strings.TrimSpace(f)
		if !slices.Contains(phaseNames, ph) {
			return nil, fmt.Errorf("--phases: %q is not one of %s", ph, strings.Join(phaseNames, ", "))
		}
		want[ph] = true
	}
	return want, nil
}

// produceSpecs are the four full-speed rows, in the order they run.
var produceSpecs = []produceSpec{
	{AcksAll: false, Partitions: 1},
	{AcksAll: false, Partitions: 16},
	{AcksAll: true, Partitions: 1},
	{AcksAll: true, Partitions: 16},
}

// latencySpec is the configuration of the fixed-rate run and of the row whose maxima set
// its rate: the Java producer's default (acks=all, idempotent), one partition.
var latencySpec = produceSpec{AcksAll: true, Partitions: 1}

const catchUpPartitions = 16

// suite runs the workloads. Its fields are fixed before the first session except
// groupConsumer (decided in the first Sluice session) and rate (after phase 1).
type suite struct {
	prof      profile
	kafkaRef  string
	sluiceBin string
	scratch   string
	res       *results
	log       *slog.Logger

	groupConsumerDecided bool
	groupConsumer        bool // consumer-perf-test (groups) rather than the kgo reader
	rate                 int  // records/s of the fixed-rate run
	// skip names systems whose sessions are not run (--systems): for iterating on one
	// system; a results file needs both.
	skip map[system]bool
}

func (s *suite) newBroker(sys system) (broker, error) {
	if sys == sysSluice {
		return newSluiceBroker(s.sluiceBin, s.scratch)
	}
	return newKafkaBroker(s.kafkaRef, s.scratch)
}

func load() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func mb(records int64) float64 { return float64(records) * recordSize / 1e6 }

// Rows. Keys are stable; labels say exactly what was measured.
func produceRow(sp produceSpec) row {
	return row{Key: "produce-" + sp.key(), Label: "Produce throughput, " + sp.label(), Unit: "MB/s", Format: "%.1f", HigherIsBetter: true}
}

func produceCPURow(sp produceSpec) row {
	label := "Broker CPU per GB produced, " + sp.label()
	if sp.Nodes > 1 {
		label = "CPU per GB produced, summed over the nodes, " + sp.label()
	}
	return row{Key: "cpu-produce-" + sp.key(), Label: label, Unit: "CPU s/GB", Format: "%.2f"}
}

var (
	rowRSSProduce = row{Key: "rss-produce", Label: "Broker peak RSS (VmHWM) after the four produce runs", Unit: "MiB", Format: "%.0f"}
	rowRSSCatchUp = row{Key: "rss-catchup", Label: "Broker peak RSS (VmHWM) after fill, catch-up read and fixed-rate run", Unit: "MiB", Format: "%.0f"}
	rowCPULatency = row{Key: "cpu-fixed-rate", Label: "Broker CPU per GB produced at the fixed rate", Unit: "CPU s/GB", Format: "%.2f"}
	rowCPUFill    = row{Key: "cpu-fill", Label: "Broker CPU per GB produced, fill (acks=1, 16 partitions, to completion)", Unit: "CPU s/GB", Format: "%.2f"}
	rowFill       = row{Key: "fill", Label: "Fill throughput (acks=1, not idempotent, 16 partitions, whole run)", Unit: "MB/s", Format: "%.1f", HigherIsBetter: true}
	rowCPUConsume = row{Key: "cpu-consume", Label: "Broker CPU per GB read in the catch-up read", Unit: "CPU s/GB", Format: "%.2f"}
	rowShutdown   = row{Key: "shutdown", Label: "Clean shutdown (SIGTERM to exit) with the filled log, after the kill -9 restart", Unit: "s", Format: "%.2f"}
	rowLogSize    = row{Key: "log-size", Label: "Log segment bytes (*.log) in the data dir at the restarts (informational)", Unit: "MiB", Format: "%.0f"}
)

func latencyRow(which string) row {
	return row{Key: "latency-" + which, Label: "Fixed-rate produce latency " + which, Unit: "ms", Format: "%.0f"}
}

func (s *suite) consumeRow() row {
	how := "kgo reader, assigned partitions, no group"
	if s.groupConsumer {
		how = "consumer-perf-test, classic group, rate over its fetch time (group join excluded)"
	}
	return row{Key: "consume", Label: fmt.Sprintf("Catch-up read of %d MiB, %d partitions (%s)", s.prof.FillBytes>>20, catchUpPartitions, how), Unit: "MB/s", Format: "%.1f", HigherIsBetter: true}
}

func startupRow(afterKill bool) row {
	if afterKill {
		return row{Key: "startup-kill", Label: "Start-up to first acknowledged produce after kill -9", Unit: "s", Format: "%.2f"}
	}
	return row{Key: "startup-clean", Label: "Start-up to first acknowledged produce after a clean stop", Unit: "s", Format: "%.2f"}
}

// session starts a fresh broker, runs fn against it, and always closes it.
func (s *suite) session(ctx context.Context, sys system, round int, phase string, fn func(broker) error) {
	b, err := s.newBroker(sys)
	if err != nil {
		s.res.note("round %d %s %s: %v", round, sys, phase, err)
		return
	}
	s.runSession(ctx, b, round, phase, func(target) error { return fn(b) })
}

// runSession starts b, warms it, runs fn against it, and always closes it.
func (s *suite) runSession(ctx context.Context, b target, round int, phase string, fn func(target) error) {
	sys := b.System()
	if s.skip[sys] {
		_ = b.Close()
		return
	}
	defer func() {
		if err := b.Close(); err != nil {
			s.log.Warn("closing broker", "system", sys, "err", err)
		}
	}()
	s.log.Info("session", "phase", phase, "round", round, "system", sys, "nodes", b.Nodes(), "load", load())
	if err := b.Start(ctx); err != nil {
		s.res.note("round %d %s %s: start failed: %v", round, sys, phase, err)
		return
	}
	if sys == sysSluice && !s.groupConsumerDecided {
		s.decideConsumer(ctx, b)
	}
	if err := s.warmBroker(ctx, b); err != nil {
		s.res.note("round %d %s %s: warm-up failed: %v", round, sys, phase, err)
		return
	}
	if err := fn(b); err != nil {
		s.res.note("round %d %s %s: %v", round, sys, phase, err)
	}
}

// warmBroker produces at full speed (acks=1, 16 partitions) for BrokerWarm seconds to a
// topic no measurement reads, so a fresh JVM has compiled its hot paths before the first
// measured run; Sluice gets the same, so both start every session equally warm.
func (s *suite) warmBroker(ctx context.Context, b target) error {
	if s.prof.BrokerWarm <= 0 {
		return nil
	}
	spec := produceSpec{Partitions: 16}
	if err := createTopic(ctx, b, "broker-warm-up", spec.Partitions); err != nil {
		return err
	}
	_, err := runProducerWindows(ctx, s.kafkaRef, b, "broker-warm-up", spec, s.prof.BrokerWarm-1, 1)
	return err
}

// produceSession: the four full-speed produce runs, then peak RSS.
func (s *suite) produceSession(ctx context.Context, sys system, round int) {
	s.session(ctx, sys, round, "produce", func(b broker) error {
		s.produceRuns(ctx, b, sys, round, produceSpecs)
		return s.recordRSS(b, rowRSSProduce, sys, round)
	})
}

// produceRuns runs each full-speed produce configuration against b, each to its own topic.
func (s *suite) produceRuns(ctx context.Context, b target, sys system, round int, specs []produceSpec) {
	for _, sp := range specs {
		s.produceRun(ctx, b, sys, round, sp)
	}
}

// produceRun measures one produce configuration to a topic of its own and records its
// throughput and CPU rows; it returns the throughput in MB/s (false when the run failed).
func (s *suite) produceRun(ctx context.Context, b target, sys system, round int, sp produceSpec) (float64, bool) {
	run, err := s.measureProduce(ctx, b, "perf-"+sp.key(), sp)
	if err != nil {
		s.res.fail(produceRow(sp), sys, round, err.Error())
		return 0, false
	}
	l := load()
	mbps := run.Stats.RecordsPerSec * recordSize / 1e6
	s.res.add(produceRow(sp), sys, round, mbps, l)
	s.res.add(produceCPURow(sp), sys, round, run.CPUSeconds/(mb(run.Stats.Records)/1e3), l)
	s.log.Info("produce", "system", sys, "spec", sp.label(), "MB/s", fmt.Sprintf("%.1f", mbps), "cpu_s", run.CPUSeconds)
	return mbps, true
}

// measureProduce creates topic and runs the full-speed windows of sp against it.
func (s *suite) measureProduce(ctx context.Context, b target, topic string, sp produceSpec) (windowedRun, error) {
	if err := createTopic(ctx, b, topic, sp.Partitions); err != nil {
		return windowedRun{}, err
	}
	return runProducerWindows(ctx, s.kafkaRef, b, topic, sp, s.prof.Warm, s.prof.Measure)
}

func (s *suite) recordRSS(b target, rw row, sys system, round int) error {
	rss, err := sumPeakRSSBytes(b.PIDs())
	if err != nil {
		s.res.fail(rw, sys, round, err.Error())
		return nil
	}
	s.res.add(rw, sys, round, float64(rss)/(1<<20), load())
	return nil
}

// decideConsumer uses Kafka's consumer-perf-test only if Sluice advertises what a classic
// group consumer needs; otherwise both systems are read by the kgo reader, so the read
// row still compares like with like.
func (s *suite) decideConsumer(ctx context.Context, b target) {
	s.groupConsumerDecided = true
	resp, err := apiVersions(ctx, seeds(b.Bootstrap())[0])
	if err != nil {
		s.res.note("could not read Sluice's ApiVersions (%v); the catch-up read uses the kgo reader", err)
		return
	}
	need := map[int16]string{10: "FindCoordinator", 11: "JoinGroup", 12: "Heartbeat", 14: "SyncGroup", 8: "OffsetCommit", 9: "OffsetFetch"}
	have := make(map[int16]bool)
	for _, k := range resp.ApiKeys {
		have[k.ApiKey] = true
	}
	var missing []string
	for key, name := range need {
		if !have[key] {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		s.groupConsumer = true
		s.res.note("Sluice advertises the classic group APIs, so the catch-up read is Kafka's consumer-perf-test on both systems.")
		return
	}
	s.res.note("Sluice does not advertise %s yet, so Kafka's consumer-perf-test (which joins a group) cannot run against it; the catch-up read uses a kgo reader with assigned partitions and no group on both systems.", strings.Join(sortedStrings(missing), ", "))
}

// setRate picks the fixed rate: half the lower of the two systems' median maxima on the
// latency row's configuration.
func (s *suite) setRate() error {
	rw := produceRow(latencySpec)
	sl, okS := s.res.median(rw.Key, sysSluice)
	kf, okK := s.res.median(rw.Key, sysKafka)
	if !okS || !okK {
		return fmt.Errorf("no maximum for %s on both systems; the fixed-rate run is skipped", latencySpec.label())
	}
	lower := math.Min(sl, kf) * 1e6 / recordSize
	s.rate = max(int(lower/2), 1)
	s.res.note("Fixed rate: %d records/s (%.1f MB/s), half the lower of the median maxima for %s (Sluice %.1f MB/s, Kafka %.1f MB/s).",
		s.rate, float64(s.rate)*recordSize/1e6, latencySpec.label(), sl, kf)
	return nil
}

// catchUpSession: the fill, the catch-up read, the fixed-rate latency run, peak RSS, then
// a clean stop and restart and a kill -9 and restart, each timed to the first produce.
func (s *suite) catchUpSession(ctx context.Context, sys system, round int) {
	s.session(ctx, sys, round, "catch-up", func(b broker) error {
		if err := s.fillAndRead(ctx, b, sys, round); err != nil {
			return err
		}
		// After the fill and the read, so a fresh JVM has had longer to compile its
		// produce path before latency is measured.
		if s.rate > 0 {
			s.fixedRate(ctx, b, sys, round)
		}
		if err := s.recordRSS(b, rowRSSCatchUp, sys, round); err != nil {
			return err
		}
		return s.restarts(ctx, b, sys, round)
	})
}

func (s *suite) fixedRate(ctx context.Context, b broker, sys system, round int) {
	if err := createTopic(ctx, b, "fixed-rate", latencySpec.Partitions); err != nil {
		s.res.fail(latencyRow("p99"), sys, round, err.Error())
		return
	}
	run, err := runProducerFixedRate(ctx, s.kafkaRef, b, "fixed-rate", latencySpec, s.rate, s.prof.RateWarm, s.prof.RateMeasure)
	if err != nil {
		s.res.fail(latencyRow("p99"), sys, round, err.Error())
		return
	}
	l := load()
	sum := run.Summary
	s.log.Info("fixed rate", "system", sys, "rate", s.rate, "achieved", sum.RecordsPerSec, "p99_ms", sum.P99Ms)
	s.res.add(latencyRow("p50"), sys, round, sum.P50Ms, l)
	s.res.add(latencyRow("p99"), sys, round, sum.P99Ms, l)
	s.res.add(latencyRow("p99.9"), sys, round, sum.P999Ms, l)
	s.res.add(latencyRow("max"), sys, round, sum.MaxLatencyMs, l)
	if run.Records > 0 {
		s.res.add(rowCPULatency, sys, round, run.CPUSeconds/(mb(run.Records)/1e3), l)
	}
	if sum.RecordsPerSec < 0.9*float64(s.rate) {
		s.res.note("round %d %s: the fixed-rate run reached only %.0f of %d records/s, so its latencies include queueing in the producer.", round, sys, sum.RecordsPerSec, s.rate)
	}
}

// fillAndRead fills a topic and reads it back; on a cluster its rows are the cluster's.
func (s *suite) fillAndRead(ctx context.Context, b target, sys system, round int) error {
	const topic = "catch-up"
	nodes := b.Nodes()
	if err := createTopic(ctx, b, topic, catchUpPartitions); err != nil {
		return fmt.Errorf("fill: %w", err)
	}
	n := s.prof.FillBytes / recordSize
	sum, cpu, err := runProducerFill(ctx, s.kafkaRef, b, topic, n)
	if err != nil {
		return err
	}
	s.res.add(rowFill.onNodes(nodes), sys, round, sum.RecordsPerSec*recordSize/1e6, load())
	s.log.Info("fill", "system", sys, "nodes", nodes, "MB/s", fmt.Sprintf("%.1f", sum.RecordsPerSec*recordSize/1e6))
	s.res.add(rowCPUFill.onNodes(nodes), sys, round, cpu/(mb(n)/1e3), load())
	ends, err := endOffsets(ctx, b.Bootstrap(), topic)
	if err != nil {
		return err
	}
	var total int64
	for _, e := range ends {
		total += e
	}
	if total < n {
		return fmt.Errorf("fill: the log holds %d of %d records written", total, n)
	}
	cpu0, err := sumCPUSeconds(b.PIDs())
	if err != nil {
		return err
	}
	consumeRow := s.consumeRow().onNodes(nodes)
	t0 := time.Now()
	var records int64
	if s.groupConsumer {
		res, err := runConsumerPerf(ctx, s.kafkaRef, b.Bootstrap(), topic, fmt.Sprintf("bench-%d", round), total)
		if err != nil {
			s.res.fail(consumeRow, sys, round, err.Error())
			return nil
		}
		records = res.Records
		s.res.add(consumeRow, sys, round, mb(res.Records)/(res.FetchTimeMs/1e3), load())
	} else {
		readCtx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		got, _, err := catchUpRead(readCtx, b.Bootstrap(), topic, ends)
		cancel()
		if err != nil {
			s.res.fail(consumeRow, sys, round, err.Error())
			return nil
		}
		records = got
		s.res.add(consumeRow, sys, round, mb(got)/time.Since(t0).Seconds(), load())
	}
	cpu1, err := sumCPUSeconds(b.PIDs())
	if err != nil {
		return err
	}
	s.log.Info("catch-up read", "system", sys, "nodes", nodes, "records", records, "seconds", time.Since(t0).Seconds())
	s.res.add(rowCPUConsume.onNodes(nodes), sys, round, (cpu1-cpu0)/(mb(records)/1e3), load())
	return nil
}

// restarts times start-up twice on the filled log: first after kill -9 of the broker
// that wrote it (its tail is unflushed, as after a crash), then after a clean stop of the
// restarted broker.
func (s *suite) restarts(ctx context.Context, b broker, sys system, round int) error {
	size, err := segmentBytes(b.DataDir())
	if err != nil {
		return err
	}
	s.res.add(rowLogSize, sys, round, float64(size)/(1<<20), load())

	if err := b.Kill(ctx); err != nil {
		return fmt.Errorf("kill -9: %w", err)
	}
	if err := s.timeStartup(ctx, b, sys, round, true); err != nil {
		return err
	}
	stopCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	t0 := time.Now()
	err = b.Stop(stopCtx)
	cancel()
	if err != nil {
		return fmt.Errorf("clean stop: %w", err)
	}
	s.res.add(rowShutdown, sys, round, time.Since(t0).Seconds(), load())
	return s.timeStartup(ctx, b, sys, round, false)
}

func (s *suite) timeStartup(ctx context.Context, b broker, sys system, round int, afterKill bool) error {
	d, err := timeToFirstProduce(ctx, b, "catch-up")
	if err != nil {
		s.res.fail(startupRow(afterKill), sys, round, err.Error())
		return fmt.Errorf("restart: %w", err)
	}
	s.res.add(startupRow(afterKill), sys, round, d.Seconds(), load())
	s.log.Info("start-up", "system", sys, "after_kill", afterKill, "seconds", d.Seconds())
	return nil
}
