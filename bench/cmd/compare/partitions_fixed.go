package main

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// partsFixedMBps is the partitions phase's fixed rate, summed over its producers. The
// max-rate produce's ack latency measures the producers' full buffers, not the broker; at a
// rate both brokers sustain it measures the broker. Kafka 4.4.0 reached only about 23 MB/s
// at max rate on 10,000 partitions on this machine (Sluice about 139): 5 MB/s is under a
// quarter of that, leaving room for the consumer's fetches of every partition and for the
// producers and consumer sharing the machine's 2 cores, so neither broker queues.
const partsFixedMBps = 5.0

// partsFixedShape describes the fixed-rate run in row labels.
func (c partsConfig) fixedShape() string {
	return fmt.Sprintf("fixed %.0f MB/s over %d producers (Go generator, linger 1 ms, batch 128 KiB), 1 consumer of every partition from its end", partsFixedMBps, c.Producers)
}

func partsE2ERow(c partsConfig, which string) row {
	return partsRow(c, "e2e-"+which, c.fixedShape()+": end-to-end latency (send to consumer receipt) "+which, "ms", "%.1f", false)
}

func partsCPUFixedRow(c partsConfig) row {
	return partsRow(c, "cpu-fixed", c.fixedShape()+": broker CPU per GB produced in the window (producing and serving the consumer)", "CPU s/GB", "%.2f", false)
}

// partsFixedSpec is the fixed-rate run over every partition of the phase's topic, which
// already holds the max-rate produce: the consumer starts at the end offsets.
func partsFixedSpec(c partsConfig, pr profile) loadSpec {
	return loadSpec{Topic: partsTopic, Partitions: c.Partitions, Producers: c.Producers, KeyRange: partsKeyRange,
		Rate: partsFixedMBps * 1e6 / recordSize, EndToEnd: true, FromEnd: true,
		Warm: time.Duration(pr.RateWarm) * time.Second, Measure: time.Duration(pr.RateMeasure) * time.Second}
}

// partsFixedRate runs after the last end-offset check, so the records it adds change no
// count that check compared; a failure fails only its own rows, as in the omb phase.
func (s *suite) partsFixedRate(ctx context.Context, b broker, sys system, round int, cfg partsConfig) {
	res, err := runLoad(ctx, b, partsFixedSpec(cfg, s.prof))
	if err != nil {
		s.res.fail(partsE2ERow(cfg, "p99"), sys, round, err.Error())
		return
	}
	l := load()
	for _, q := range []struct {
		name string
		v    time.Duration
	}{{"p50", res.E2E.Quantile(0.5)}, {"p99", res.E2E.Quantile(0.99)}, {"p99.9", res.E2E.Quantile(0.999)}, {"max", res.E2E.Max()}} {
		s.res.add(partsE2ERow(cfg, q.name), sys, round, ms(q.v), l)
	}
	s.res.add(partsCPUFixedRow(cfg), sys, round, res.CPUSeconds/(mb(res.Acked)/1e3), l)
	s.log.Info("partitions fixed rate", "system", sys, "MB/s", fmt.Sprintf("%.1f", res.MBps()), "p99_ms", ms(res.E2E.Quantile(0.99)), "max_ms", ms(res.E2E.Max()))
	if res.MBps() < 0.9*partsFixedMBps {
		s.res.note("round %d %s: the partitions fixed-rate run reached only %.1f of %.0f MB/s, so its latencies include queueing in the producers.", round, sys, res.MBps(), partsFixedMBps)
	}
}

// renderPartsFixedMethod says how the fixed-rate rows were measured.
func renderPartsFixedMethod(b *strings.Builder, pr profile) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format+"\n", args...) }
	p("  Last, on the restarted broker and the same topic (after the end-offset check), the")
	p("  omb phase's Go generator sends %.0f MB/s of 1 KiB values with random keys in [0, %d)", partsFixedMBps, partsKeyRange)
	p("  over every partition (linger 1 ms, batch 128 KiB, paced per producer), with one franz-go")
	p("  consumer assigned every partition at the end offsets listed before the producers start")
	p("  (not offset 0: that would measure a catch-up read of the produce run). End-to-end")
	p("  latency is send to receipt for records sent in the %d s window after %d s of warm-up;", pr.RateMeasure, pr.RateWarm)
	p("  broker CPU is over that window; the run fails unless the consumer receives every")
	p("  acknowledged record. The rate is under a quarter of Kafka's max rate at 10,000 partitions")
	p("  here (about 23 MB/s), so the latency is the broker's, not queueing in the producers.")
}
