package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The connections phase (issue 24, item 5): 1,000 idle client connections held open beside
// 100 active producers. It measures what an idle connection costs the broker (VmRSS before
// and after opening them) and whether they slow the producers (throughput at max rate and
// end-to-end latency at a fixed rate, without and with them).
const (
	connIdle       = 1000
	connProducers  = 100
	connPartitions = 16
	connFixedMBps  = 50.0 // summed over the producers
	// connMaxWindow caps the measured seconds of each run, so four runs a session keep
	// the phase near 10 minutes in the full profile.
	connMaxWindow = 10
	// connBufferBytes is each producer's buffer: 100 producers at Java's 32 MiB would let
	// the generator hold 3.2 GB on a shared machine; 4 MiB still keeps every one busy.
	connBufferBytes = 4 << 20
)

const connShape = "1 topic, 16 partitions, 1 KiB values, random keys, acks=all idempotent, linger.ms=1, batch.size=128 KiB; the Go generator, one franz-go client each"

var (
	rowConnRSSBefore = row{Key: "conn-rss-before", Label: fmt.Sprintf("Broker RSS (VmRSS) before opening %d idle connections (after the runs without them)", connIdle), Unit: "MiB", Format: "%.0f"}
	rowConnRSSIdle   = row{Key: "conn-rss-idle", Label: fmt.Sprintf("Broker RSS (VmRSS) with %d idle connections open (ApiVersions and Metadata done, then silent)", connIdle), Unit: "MiB", Format: "%.0f"}
	rowConnPerIdle   = row{Key: "conn-mem-per-idle", Label: fmt.Sprintf("Broker memory per idle connection: VmRSS after minus before opening them, over %d", connIdle), Unit: "KiB", Format: "%.1f"}
)

func connMaxRow(idle bool) row {
	return row{Key: "conn-max-" + withKey(idle), Label: fmt.Sprintf("Produce throughput, %d producers at max rate, %s; %s", connProducers, withLabel(idle), connShape), Unit: "MB/s", Format: "%.1f", HigherIsBetter: true}
}

func connP99Row(idle bool) row {
	return row{Key: "conn-e2e-p99-" + withKey(idle), Label: fmt.Sprintf("End-to-end latency p99 (send to consumer receipt), %d producers at %.0f MB/s in total, %s", connProducers, connFixedMBps, withLabel(idle)), Unit: "ms", Format: "%.3f"}
}

func withKey(idle bool) string {
	if idle {
		return "idle"
	}
	return "alone"
}

func withLabel(idle bool) string {
	if idle {
		return fmt.Sprintf("with %d idle connections open", connIdle)
	}
	return "no idle connections"
}

// connectionsPhase alternates Sluice and Kafka sessions, a fresh broker each.
func (s *suite) connectionsPhase(ctx context.Context) {
	// Idle connections, 100 producers' (a seed and a produce connection each, at most
	// three), the consumer's, and spare for the rest of the process.
	if err := raiseNoFileLimit(connIdle + 4*connProducers + 256); err != nil {
		s.res.note("connections phase skipped: %v", err)
		return
	}
	for r := 1; r <= s.prof.Rounds && ctx.Err() == nil; r++ {
		for _, sys := range []system{sysSluice, sysKafka} {
			s.session(ctx, sys, r, "connections", func(b broker) error { return s.connRuns(ctx, b, sys, r) })
		}
	}
}

// connRuns measures the producers alone, then opens the idle connections (VmRSS on both
// sides of that), measures the producers again and checks every idle connection still
// answers before the second runs' rows count.
func (s *suite) connRuns(ctx context.Context, b broker, sys system, round int) error {
	const idleTopic = "conn-idle"
	if err := createTopic(ctx, b, idleTopic, 1); err != nil {
		return err
	}
	s.recordConnLoads(s.connLoads(ctx, b, false), sys, round, false)
	// A moment for the runs' own buffers to settle before the first sample.
	if err := sleepCtx(ctx, 2*time.Second); err != nil {
		return err
	}
	before, err := rssBytes(b.PID())
	if err != nil {
		return err
	}
	idle, err := openIdleConns(ctx, seeds(b.Bootstrap())[0], idleTopic, connIdle, 32)
	if err != nil {
		s.res.fail(rowConnRSSIdle, sys, round, err.Error())
		return nil
	}
	defer idle.close()
	if err := sleepCtx(ctx, time.Second); err != nil {
		return err
	}
	after, err := rssBytes(b.PID())
	if err != nil {
		return err
	}
	l := load()
	s.res.add(rowConnRSSBefore, sys, round, float64(before)/(1<<20), l)
	s.res.add(rowConnRSSIdle, sys, round, float64(after)/(1<<20), l)
	s.res.add(rowConnPerIdle, sys, round, float64(after-before)/1024/connIdle, l)
	s.log.Info("connections", "system", sys, "idle", connIdle, "rss_before_MiB", before>>20, "rss_after_MiB", after>>20)
	with := s.connLoads(ctx, b, true)
	if n := idle.alive(); n < connIdle {
		reason := fmt.Sprintf("only %d of %d idle connections still answered ApiVersions after the runs", n, connIdle)
		s.res.fail(connMaxRow(true), sys, round, reason)
		s.res.fail(connP99Row(true), sys, round, reason)
		return nil
	}
	s.recordConnLoads(with, sys, round, true)
	return nil
}

// connRunsResult is what one pair of runs measured, recorded once the idle connections
// are known to have stayed open.
type connRunsResult struct {
	max, fixed       loadResult
	maxErr, fixedErr error
}

// connLoads runs the producers at max rate, then at the fixed rate with a consumer, each
// on a topic of its own.
func (s *suite) connLoads(ctx context.Context, b broker, idle bool) connRunsResult {
	base := loadSpec{Partitions: connPartitions, Producers: connProducers, KeyRange: ombKeyRange,
		ClientOpts: []kgo.Opt{kgo.MaxBufferedBytes(connBufferBytes)}}
	var out connRunsResult
	maxSpec := base
	maxSpec.Topic = "conn-max-" + withKey(idle)
	maxSpec.Warm, maxSpec.Measure = time.Duration(s.prof.Warm)*time.Second, time.Duration(min(s.prof.Measure, connMaxWindow))*time.Second
	out.max, out.maxErr = s.connLoad(ctx, b, maxSpec)
	fixed := base
	fixed.Topic = "conn-fixed-" + withKey(idle)
	fixed.Rate, fixed.EndToEnd = connFixedMBps*1e6/recordSize, true
	fixed.Warm, fixed.Measure = time.Duration(s.prof.RateWarm)*time.Second, time.Duration(min(s.prof.RateMeasure, connMaxWindow))*time.Second
	out.fixed, out.fixedErr = s.connLoad(ctx, b, fixed)
	return out
}

func (s *suite) recordConnLoads(r connRunsResult, sys system, round int, idle bool) {
	l := load()
	if r.maxErr != nil {
		s.res.fail(connMaxRow(idle), sys, round, r.maxErr.Error())
	} else {
		s.res.add(connMaxRow(idle), sys, round, r.max.MBps(), l)
	}
	if r.fixedErr != nil {
		s.res.fail(connP99Row(idle), sys, round, r.fixedErr.Error())
		return
	}
	s.res.add(connP99Row(idle), sys, round, ms(r.fixed.E2E.Quantile(0.99)), l)
	if mbps := r.fixed.MBps(); mbps < 0.9*connFixedMBps {
		s.res.note("round %d %s: the connections phase's fixed-rate run (%s) reached only %.1f of %.0f MB/s, so its latency includes queueing in the producers.", round, sys, withLabel(idle), mbps, connFixedMBps)
	}
}

func (s *suite) connLoad(ctx context.Context, b broker, spec loadSpec) (loadResult, error) {
	if err := createTopic(ctx, b, spec.Topic, spec.Partitions); err != nil {
		return loadResult{}, err
	}
	res, err := runLoad(ctx, b, spec)
	if err == nil {
		s.log.Info("connections load", "system", b.System(), "topic", spec.Topic, "MB/s", fmt.Sprintf("%.1f", res.MBps()), "p99_ms", ms(res.E2E.Quantile(0.99)))
	}
	return res, err
}

// renderConnMethod says how the connections rows were measured.
func renderConnMethod(b *strings.Builder, pr profile) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format+"\n", args...) }
	p("- Connections rows (issue 24): single broker. %d producers (the Go generator: one franz-go", connProducers)
	p("  client each, in one process, with a %d MiB buffer each) to 1 topic of %d partitions, 1 KiB", connBufferBytes>>20, connPartitions)
	p("  values with random keys, acks=all idempotent, linger.ms=1, batch.size=128 KiB,")
	p("  run twice, alone and then with %d idle connections open: at max rate (%d s warm-up, %d s", connIdle, pr.Warm, min(pr.Measure, connMaxWindow))
	p("  measured) and at %.0f MB/s in total with a consumer of all partitions (%d s warm-up, %d s", connFixedMBps, pr.RateWarm, min(pr.RateMeasure, connMaxWindow))
	p("  measured; end-to-end latency as the OMB rows), each run on a new topic. An idle connection")
	p("  is raw TCP with Kafka framing from the generator's process: ApiVersions v3, Metadata for one")
	p("  topic, then silence (both brokers keep the defaults max.connections.per.ip unlimited and")
	p("  connections.max.idle.ms 10 minutes). Broker VmRSS is read 2 s after the runs without them")
	p("  and 1 s after all %d are open; memory per connection is the difference over %d. It is", connIdle, connIdle)
	p("  not like for like: Kafka's 1 GiB heap (-Xms1G) is resident after the warm-up, so its")
	p("  connections' objects land in pages already counted and only off-heap growth shows, while")
	p("  Sluice's Go heap grows its RSS; kernel socket buffers are in neither. Read it to a few KiB.")
	p("  After the runs with them every idle connection must answer ApiVersions again, or those")
	p("  runs are listed as failed for the round, not as values.")
}
