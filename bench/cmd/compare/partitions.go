package main

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// The partitions phase (issue 24, item 5): one broker hosting one topic of many partitions
// (10,000 in the full profile). It times the topic's creation until every partition takes a
// produce, produces a fixed volume to all of them, reads the broker's memory idle and after
// the produce, and times a restart after kill -9 and after a clean stop to a produce to
// every partition acknowledged, checking that every acknowledged record is still there.
const (
	partsTopic    = "partitions"
	partsKeyRange = 1_000_000
	partsLinger   = 5 * time.Millisecond
	partsBatch    = 16 << 10 // the Java producer's batch.size
)

// partsConfig sizes one session of the phase.
type partsConfig struct {
	Partitions int
	Producers  int
	Bytes      int64         // value bytes produced to the topic at max rate...
	MaxRun     time.Duration // ...unless the run has taken this long (a slow broker)
}

// partsConfigFor is the phase's size in a profile: the full profile's is issue 24's 10,000
// partitions with 2 GiB (about 30-60 s on this machine); the quick one a tenth of them.
func partsConfigFor(pr profile) partsConfig {
	if pr.Name == "full" {
		return partsConfig{Partitions: 10000, Producers: 4, Bytes: 2 << 30, MaxRun: 3 * time.Minute}
	}
	return partsConfig{Partitions: 1000, Producers: 4, Bytes: 256 << 20, MaxRun: time.Minute}
}

// partsShape describes the produce run in row labels.
func (c partsConfig) shape() string {
	return fmt.Sprintf("%d producers (Go generator), 1 KiB values, random keys, acks=all idempotent, linger 5 ms, batch 16 KiB, %d MiB in total", c.Producers, c.Bytes>>20)
}

func partsRow(c partsConfig, key, label, unit, format string, higher bool) row {
	return row{Key: "parts-" + key, Label: fmt.Sprintf("%d partitions, 1 broker: %s", c.Partitions, label), Unit: unit, Format: format, HigherIsBetter: higher}
}

func partsCreateRow(c partsConfig) row {
	return partsRow(c, "create", "create the topic (RF 1; CreateTopics of 5000, then CreatePartitions by 5000) to every partition led and one produce to each acknowledged", "s", "%.2f", false)
}

func partsRSSIdleRow(c partsConfig) row {
	return partsRow(c, "rss-idle", "broker RSS (VmRSS) with the partitions idle, 3 s after creation", "MiB", "%.0f", false)
}

func partsProduceRow(c partsConfig) row {
	return partsRow(c, "produce", "produce throughput to all of them, "+c.shape(), "MB/s", "%.1f", true)
}

func partsCPURow(c partsConfig) row {
	return partsRow(c, "cpu-produce", "broker CPU per GB produced to all of them", "CPU s/GB", "%.2f", false)
}

func partsAckRow(c partsConfig, which string) row {
	return partsRow(c, "ack-"+which, "produce ack latency "+which+" (Produce call to acknowledgement, max rate: includes queueing in the producers' 32 MiB buffers)", "ms", "%.1f", false)
}

func partsRSSAfterRow(c partsConfig) row {
	return partsRow(c, "rss-after", "broker RSS (VmRSS) right after the produce", "MiB", "%.0f", false)
}

func partsHWMRow(c partsConfig) row {
	return partsRow(c, "rss-peak", "broker peak RSS (VmHWM) after the produce", "MiB", "%.0f", false)
}

func partsRestartRow(c partsConfig, afterKill, all bool) row {
	key, how := "clean", "after a clean stop"
	if afterKill {
		key, how = "kill", "after kill -9 right after the produce"
	}
	what := "first acknowledged produce"
	if all {
		key += "-all"
		what = fmt.Sprintf("a produce to every one of the %d partitions acknowledged", c.Partitions)
	} else {
		key += "-first"
	}
	return partsRow(c, "restart-"+key, "restart "+how+", exec to "+what, "s", "%.2f", false)
}

func partsShutdownRow(c partsConfig) row {
	return partsRow(c, "shutdown", "clean shutdown (SIGTERM to exit) after the kill -9 restart", "s", "%.2f", false)
}

// partitionsPhase alternates Sluice and Kafka sessions, a fresh broker each.
func (s *suite) partitionsPhase(ctx context.Context) {
	cfg := partsConfigFor(s.prof)
	// Kafka holds each partition's active .log open (its indexes are mapped, their files
	// closed); Sluice the same (commitlog.FilesPerPartition). Children inherit the limit.
	if err := raiseNoFileLimit(uint64(cfg.Partitions) + 2048); err != nil {
		s.res.note("partitions phase skipped: %v", err)
		return
	}
	for r := 1; r <= s.prof.Rounds && ctx.Err() == nil; r++ {
		for _, sys := range []system{sysSluice, sysKafka} {
			s.session(ctx, sys, r, "partitions", func(b broker) error { return s.partsRuns(ctx, b, sys, r, cfg) })
		}
	}
}

// partsRuns is one session: create, idle RSS, the produce, RSS, the two restarts, then
// the fixed-rate end-to-end run.
// A record acknowledged and missing after a restart fails the session with an error that
// says so (and the restart's rows are listed as failed, not as values).
func (s *suite) partsRuns(ctx context.Context, b broker, sys system, round int, cfg partsConfig) error {
	acked := newPartCounts(cfg.Partitions)
	d, err := createAndTouch(ctx, b, partsTopic, cfg.Partitions, acked)
	if err != nil {
		s.res.fail(partsCreateRow(cfg), sys, round, err.Error())
		return err
	}
	s.res.add(partsCreateRow(cfg), sys, round, d.Seconds(), load())
	s.log.Info("partitions created", "system", sys, "partitions", cfg.Partitions, "seconds", d.Seconds())
	if err := sleepCtx(ctx, 3*time.Second); err != nil {
		return err
	}
	if err := s.recordVmRSS(b, partsRSSIdleRow(cfg), sys, round); err != nil {
		return err
	}
	res, err := producePartitions(ctx, b, partsTopic, cfg, acked)
	if err != nil {
		s.res.fail(partsProduceRow(cfg), sys, round, err.Error())
		return err
	}
	s.recordPartsProduce(res, cfg, sys, round)
	if err := s.recordVmRSS(b, partsRSSAfterRow(cfg), sys, round); err != nil {
		return err
	}
	if err := s.recordRSS(b, partsHWMRow(cfg), sys, round); err != nil {
		return err
	}
	if err := s.partsRestarts(ctx, b, sys, round, cfg, acked); err != nil {
		return err
	}
	s.partsFixedRate(ctx, b, sys, round, cfg)
	return nil
}

func (s *suite) recordVmRSS(b broker, rw row, sys system, round int) error {
	rss, err := rssBytes(b.PID())
	if err != nil {
		return err
	}
	s.res.add(rw, sys, round, float64(rss)/(1<<20), load())
	return nil
}

func (s *suite) recordPartsProduce(res partsResult, cfg partsConfig, sys system, round int) {
	l := load()
	s.res.add(partsProduceRow(cfg), sys, round, res.MBps(), l)
	s.res.add(partsCPURow(cfg), sys, round, res.CPUSeconds/(mb(res.Acked)/1e3), l)
	for _, q := range []struct {
		name string
		v    time.Duration
	}{{"p50", res.Ack.Quantile(0.5)}, {"p99", res.Ack.Quantile(0.99)}, {"p99.9", res.Ack.Quantile(0.999)}} {
		s.res.add(partsAckRow(cfg, q.name), sys, round, ms(q.v), l)
	}
	s.log.Info("partitions produce", "system", sys, "MB/s", fmt.Sprintf("%.1f", res.MBps()), "seconds", res.Seconds, "cpu_s", res.CPUSeconds, "ack_p99_ms", ms(res.Ack.Quantile(0.99)))
	if res.Acked*recordSize < cfg.Bytes {
		s.res.note("round %d %s: the partitions produce stopped at %.0f s with %d of %d MiB acknowledged.", round, sys, cfg.MaxRun.Seconds(), res.Acked*recordSize>>20, cfg.Bytes>>20)
	}
}

// partsRestarts kills the broker right after the produce and times its restart, then
// stops it cleanly and times that restart; after each, every partition's end offset must
// equal the records acknowledged to it.
func (s *suite) partsRestarts(ctx context.Context, b broker, sys system, round int, cfg partsConfig, acked *partCounts) error {
	if err := b.Kill(ctx); err != nil {
		return fmt.Errorf("kill -9: %w", err)
	}
	if err := s.partsRestart(ctx, b, sys, round, cfg, acked, true); err != nil {
		return err
	}
	stopCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	t0 := time.Now()
	err := b.Stop(stopCtx)
	cancel()
	if err != nil {
		return fmt.Errorf("clean stop: %w", err)
	}
	s.res.add(partsShutdownRow(cfg), sys, round, time.Since(t0).Seconds(), load())
	return s.partsRestart(ctx, b, sys, round, cfg, acked, false)
}

func (s *suite) partsRestart(ctx context.Context, b broker, sys system, round int, cfg partsConfig, acked *partCounts, afterKill bool) error {
	first, all, err := restartToProduces(ctx, b, partsTopic, cfg.Partitions, acked)
	if err != nil {
		s.res.fail(partsRestartRow(cfg, afterKill, true), sys, round, err.Error())
		return fmt.Errorf("restart (after kill -9: %v): %w", afterKill, err)
	}
	ends, err := endOffsets(ctx, b.Bootstrap(), partsTopic)
	if err != nil {
		return err
	}
	if err := checkEndOffsets(ends, acked.snapshot()); err != nil {
		reason := "ACKNOWLEDGED RECORDS LOST OR DUPLICATED: " + err.Error()
		s.log.Error("partitions restart", "system", sys, "after_kill", afterKill, "err", reason)
		s.res.fail(partsRestartRow(cfg, afterKill, true), sys, round, reason)
		return fmt.Errorf("restart (after kill -9: %v): %s", afterKill, reason)
	}
	l := load()
	s.res.add(partsRestartRow(cfg, afterKill, false), sys, round, first.Seconds(), l)
	s.res.add(partsRestartRow(cfg, afterKill, true), sys, round, all.Seconds(), l)
	s.log.Info("partitions restart", "system", sys, "after_kill", afterKill, "first_s", first.Seconds(), "all_s", all.Seconds())
	return nil
}

// checkEndOffsets compares every partition's end offset with the records acknowledged to
// it (the topic is written only by the phase, from offset 0, idempotently): fewer is an
// acknowledged record lost, more a record written twice; a partition missing from the
// listing counts as lost.
func checkEndOffsets(ends map[int32]int64, acked []int64) error {
	var bad []string
	var lost, extra int64
	for p, want := range acked {
		got, ok := ends[int32(p)]
		if !ok {
			got = -1
		}
		if got == want {
			continue
		}
		if got < want {
			lost += want - max(got, 0)
		} else {
			extra += got - want
		}
		if len(bad) < 5 {
			bad = append(bad, fmt.Sprintf("partition %d end %d, acknowledged %d", p, got, want))
		}
	}
	if len(ends) > len(acked) {
		bad = append(bad, fmt.Sprintf("%d partitions listed, %d created", len(ends), len(acked)))
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%d records missing, %d extra (%s)", lost, extra, strings.Join(bad, "; "))
}

// renderPartsMethod says how the partitions rows were measured.
func renderPartsMethod(b *strings.Builder, pr profile) {
	c := partsConfigFor(pr)
	p := func(format string, args ...any) { fmt.Fprintf(b, format+"\n", args...) }
	p("- Partitions rows (issue 24): single broker, both systems with their defaults (Kafka: kafka-ref's")
	p("  -Xmx1G -Xms1G, num.io.threads 8, num.network.threads 3). One topic of %d partitions, RF 1,", c.Partitions)
	p("  created with kadm in requests of at most %d partitions (CreateTopics, then CreatePartitions:", partsStep)
	p("  both controllers refuse more than 9,999 in one request with POLICY_VIOLATION); the creation")
	p("  time runs from the CreateTopics request until Metadata shows")
	p("  every partition led and one record produced to each (acks=all, idempotent) is acknowledged.")
	p("  RSS is read 3 s later. Then %d franz-go producers in the suite's process (acks=all", c.Producers)
	p("  idempotent, linger 5 ms, batch 16 KiB, max.request.size 1 MiB, buffer 32 MiB, no")
	p("  compression: the Java producer's defaults) send %d MiB of 1 KiB values with random keys in", c.Bytes>>20)
	p("  [0, %d) (murmur2, so every partition gets records) as fast as the broker takes them (at", partsKeyRange)
	p("  most %.0f s); throughput and CPU are over the whole run, first send to last ack; ack", c.MaxRun.Seconds())
	p("  latency runs from the Produce call to its acknowledgement, so at max rate it includes the")
	p("  wait in the producers' buffers. Each record acknowledged is counted per partition. The")
	p("  broker is then killed (SIGKILL) and relaunched on its data: \"first\" is exec to one")
	p("  acknowledged produce (partition 0), \"all\" exec to one more record acknowledged on every")
	p("  partition (one idempotent client, retries every 10 ms). Then a clean stop (SIGTERM, timed)")
	p("  and the same two timings. After each restart every partition's end offset must equal the")
	p("  records acknowledged to it, or the session fails saying which were lost.")
	renderPartsFixedMethod(b, pr)
}
