package main

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// The omb phase runs the OpenMessaging Benchmark's Kafka workload shapes (issue 24, items 5
// and 6): one topic of 100 partitions, 1 KiB values with random keys (so records spread
// over the partitions), 4 and 32 producers, with its Kafka driver's producer settings
// (driver-kafka/kafka.yaml: acks=all, linger.ms=1, batch.size=128 KiB); a max-rate run, and a fixed 50 MB/s run with
// a consumer reading at the same time for end-to-end latency.
const (
	ombPartitions = 100
	ombKeyRange   = 100000
	ombFixedMBps  = 50.0 // summed over the producers
)

// ombProducerCounts are the shapes' producer counts.
var ombProducerCounts = []int{4, 32}

// ombPerfSpec is the shape as producer-perf-test runs it: one process per producer.
var ombPerfSpec = produceSpec{AcksAll: true, Partitions: ombPartitions, KeyRange: ombKeyRange,
	Props: "linger.ms=1 batch.size=131072"}

const ombShape = "1 topic, 100 partitions, 1 KiB values, random keys, acks=all idempotent, linger.ms=1, batch.size=128 KiB, no compression"

func ombPerfRow(n int) row {
	return row{Key: fmt.Sprintf("omb-perf-max-p%d", n), Label: fmt.Sprintf("OMB shape, max rate, %d producers (%d producer-perf-test processes, --key-distribution random); %s", n, n, ombShape), Unit: "MB/s", Format: "%.1f", HigherIsBetter: true}
}

func ombPerfCPURow(n int) row {
	return row{Key: fmt.Sprintf("cpu-omb-perf-max-p%d", n), Label: fmt.Sprintf("Broker CPU per GB produced, OMB shape, max rate, %d producer-perf-test processes", n), Unit: "CPU s/GB", Format: "%.2f"}
}

func ombGoRow(n int) row {
	return row{Key: fmt.Sprintf("omb-go-max-p%d", n), Label: fmt.Sprintf("OMB shape, max rate, %d producers (the suite's Go generator: %d franz-go clients in one process); %s", n, n, ombShape), Unit: "MB/s", Format: "%.1f", HigherIsBetter: true}
}

func ombGoCPURow(n int) row {
	return row{Key: fmt.Sprintf("cpu-omb-go-max-p%d", n), Label: fmt.Sprintf("Broker CPU per GB produced, OMB shape, max rate, %d producers (Go generator)", n), Unit: "CPU s/GB", Format: "%.2f"}
}

func ombE2ERow(n int, which string) row {
	return row{Key: fmt.Sprintf("omb-e2e-p%d-%s", n, which), Label: fmt.Sprintf("OMB shape, fixed %.0f MB/s over %d producers (Go generator), end-to-end latency (send to consumer receipt) %s", ombFixedMBps, n, which), Unit: "ms", Format: "%.3f"}
}

func ombRateRow(n int) row {
	return row{Key: fmt.Sprintf("omb-fixed-rate-p%d", n), Label: fmt.Sprintf("OMB shape, fixed %.0f MB/s over %d producers: rate acknowledged in the window (informational; under %.0f means the broker did not keep up)", ombFixedMBps, n, ombFixedMBps), Unit: "MB/s", Format: "%.1f", HigherIsBetter: true}
}

func ombCPUFixedRow(n int) row {
	return row{Key: fmt.Sprintf("cpu-omb-fixed-p%d", n), Label: fmt.Sprintf("Broker CPU per GB produced, OMB shape, fixed %.0f MB/s over %d producers, consumer reading (CPU of both)", ombFixedMBps, n), Unit: "CPU s/GB", Format: "%.2f"}
}

// ombPhase alternates Sluice and Kafka sessions, a fresh broker each.
func (s *suite) ombPhase(ctx context.Context) {
	for r := 1; r <= s.prof.Rounds && ctx.Err() == nil; r++ {
		for _, sys := range []system{sysSluice, sysKafka} {
			s.session(ctx, sys, r, "omb", func(b broker) error { return s.ombRuns(ctx, b, sys, r) })
		}
	}
}

// ombRuns measures, each on a new topic: the fixed-rate runs first (so no backlog a
// max-rate run leaves, flushing or collecting garbage, leaks into the latencies), then
// producer-perf-test at max rate with 4 processes and the Go generator at max rate with 4
// and 32 producers.
func (s *suite) ombRuns(ctx context.Context, b broker, sys system, round int) error {
	for _, n := range ombProducerCounts {
		s.ombGo(ctx, b, sys, round, n, true)
	}
	topic := "omb-perf-p4"
	if err := createTopic(ctx, b, topic, ombPartitions); err != nil {
		return err
	}
	run, err := runProducersWindows(ctx, s.kafkaRef, b, topic, ombPerfSpec, 4, s.prof.Warm, s.prof.Measure)
	if err != nil {
		s.res.fail(ombPerfRow(4), sys, round, err.Error())
	} else {
		l := load()
		s.res.add(ombPerfRow(4), sys, round, run.Stats.RecordsPerSec*recordSize/1e6, l)
		s.res.add(ombPerfCPURow(4), sys, round, run.CPUSeconds/(mb(run.Stats.Records)/1e3), l)
	}
	for _, n := range ombProducerCounts {
		s.ombGo(ctx, b, sys, round, n, false)
	}
	return nil
}

// ombGo runs the Go generator with n producers to a new topic, at max rate or, with
// fixed, at ombFixedMBps with a consumer, and records its rows.
func (s *suite) ombGo(ctx context.Context, b broker, sys system, round, n int, fixed bool) {
	spec := loadSpec{Topic: fmt.Sprintf("omb-go-max-p%d", n), Partitions: ombPartitions, Producers: n, KeyRange: ombKeyRange,
		Warm: time.Duration(s.prof.Warm) * time.Second, Measure: time.Duration(s.prof.Measure) * time.Second}
	failRow := ombGoRow(n)
	if fixed {
		spec.Topic = fmt.Sprintf("omb-fixed-p%d", n)
		spec.Rate = ombFixedMBps * 1e6 / recordSize
		spec.EndToEnd = true
		spec.Warm, spec.Measure = time.Duration(s.prof.RateWarm)*time.Second, time.Duration(s.prof.RateMeasure)*time.Second
		failRow = ombE2ERow(n, "p99")
	}
	if err := createTopic(ctx, b, spec.Topic, ombPartitions); err != nil {
		s.res.fail(failRow, sys, round, err.Error())
		return
	}
	res, err := runLoad(ctx, b, spec)
	if err != nil {
		s.res.fail(failRow, sys, round, err.Error())
		return
	}
	l := load()
	cpuPerGB := res.CPUSeconds / (mb(res.Acked) / 1e3)
	s.log.Info("omb", "system", sys, "producers", n, "fixed", fixed, "MB/s", fmt.Sprintf("%.1f", res.MBps()), "p99_ms", ms(res.E2E.Quantile(0.99)))
	if !fixed {
		s.res.add(ombGoRow(n), sys, round, res.MBps(), l)
		s.res.add(ombGoCPURow(n), sys, round, cpuPerGB, l)
		return
	}
	for _, q := range []struct {
		name string
		v    time.Duration
	}{{"p50", res.E2E.Quantile(0.5)}, {"p99", res.E2E.Quantile(0.99)}, {"p99.9", res.E2E.Quantile(0.999)}, {"max", res.E2E.Max()}} {
		s.res.add(ombE2ERow(n, q.name), sys, round, ms(q.v), l)
	}
	s.res.add(ombRateRow(n), sys, round, res.MBps(), l)
	s.res.add(ombCPUFixedRow(n), sys, round, cpuPerGB, l)
	if res.MBps() < 0.9*ombFixedMBps {
		s.res.note("round %d %s: the OMB fixed-rate run with %d producers reached only %.1f of %.0f MB/s, so its latencies include queueing in the producers.", round, sys, n, res.MBps(), ombFixedMBps)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// renderOMBMethod says how the omb rows were measured.
func renderOMBMethod(b *strings.Builder, pr profile) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format+"\n", args...) }
	p("- OMB rows (issue 24): the OpenMessaging Benchmark's Kafka shapes, single broker, a new")
	p("  topic of %d partitions per run, 1 KiB values with random keys in [0, %d) (so records", ombPartitions, ombKeyRange)
	p("  spread over the partitions by the clients' murmur2 partitioner), acks=all idempotent,")
	p("  linger.ms=1, batch.size=128 KiB (OMB's driver-kafka/kafka.yaml), no compression (the")
	p("  Java default; franz-go's default, snappy, is turned off). Max rate, 4 producers: 4")
	p("  producer-perf-test processes (`--key-distribution random --record-key-range %d`, a", ombKeyRange)
	p("  `--random-seed` each); once all have printed %d one-second windows, %d s of wall time are", pr.Warm, pr.Measure)
	p("  measured and the throughput is the sum of each process's rate over its windows in them.")
	p("  32 producers are not 32 JVMs (on this machine they would measure the clients' JIT): the")
	p("  suite's Go generator runs 4 and 32 franz-go clients (one connection each) in its own")
	p("  process, with the Java producer's max.request.size (1 MiB) and buffer.memory (32 MiB),")
	p("  %d s warm-up and %d s measured, acknowledged records counted in the window.", pr.Warm, pr.Measure)
	p("- OMB end-to-end latency: the Go generator at %.0f MB/s summed over 4 or 32 producers,", ombFixedMBps)
	p("  paced per producer, each value carrying its send time (ns) in its first 8 bytes; one")
	p("  franz-go consumer of all partitions (assigned, from offset 0, the Java consumer's fetch")
	p("  defaults: 500 ms max wait, 1 MiB per partition) in the same process records")
	p("  send-to-receipt for records sent in")
	p("  the %d s window after %d s of warm-up, in log-linear microsecond buckets (at most 0.8%%", pr.RateMeasure, pr.RateWarm)
	p("  off, HdrHistogram-style); the run fails unless the consumer receives every acknowledged")
	p("  record. The generator and consumer share the machine's CPUs with the broker on both sides.")
	p("  A session runs the two fixed-rate runs first, then the max-rate runs, each on a new topic.")
}
