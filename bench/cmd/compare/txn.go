package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// txnDurationMs is how long producer-perf-test keeps each transaction open before
// commitTransaction (--transaction-duration-ms): issue 15 asks for a commit every 100 ms.
const txnDurationMs = 100

// txnProduceSpecs are the transactional full-speed rows on a cluster of the given size (1: a
// single broker): the Java transactional producer (acks=all, idempotent) committing every
// txnDurationMs on 1 and 16 partitions, beside the plain acks=all rows of the same shape.
func txnProduceSpecs(nodes int) []produceSpec {
	return []produceSpec{
		{AcksAll: true, Partitions: 1, Nodes: nodes, TxnDurationMs: txnDurationMs},
		{AcksAll: true, Partitions: 16, Nodes: nodes, TxnDurationMs: txnDurationMs},
	}
}

// txnToolArgs are producer-perf-test's transaction flags for a spec, none for a plain one.
// Each run has a transactional id of its own (every run writes its own topic on a fresh
// broker): a run killed mid-transaction leaves that transaction open until the broker's
// timeout aborts it, and no later run may wait on it.
func (p produceSpec) txnToolArgs(topic string) []string {
	if p.TxnDurationMs <= 0 {
		return nil
	}
	return []string{
		"--transactional-id", "bench-" + topic,
		"--transaction-duration-ms", strconv.Itoa(p.TxnDurationMs),
	}
}

// endTxnTopic is the one-partition topic the EndTxn latency loop writes.
const endTxnTopic = "txn-latency"

func endTxnRow(which string, nodes int) row {
	return row{
		Key:   "endtxn-" + which + nodesKey(nodes),
		Label: "EndTxn (commit) latency " + which + ", franz-go EndTransaction after one acknowledged 1 KiB record, transactions one after another, 1 partition" + nodesLabel(nodes),
		Unit:  "ms", Format: "%.2f",
	}
}

func txnRateRow(nodes int) row {
	return row{
		Key:   "txn-rate" + nodesKey(nodes),
		Label: "Small transactions per second, one after another (begin, one 1 KiB record acknowledged, commit), same loop" + nodesLabel(nodes),
		Unit:  "txn/s", Format: "%.1f", HigherIsBetter: true,
	}
}

// txnPhase runs the transaction sessions: every round alternates Sluice and Kafka on a
// single broker (when 1 is among the sizes), then on each cluster size.
func (s *suite) txnPhase(ctx context.Context, single bool, clusters []int) {
	if single {
		for r := 1; r <= s.prof.Rounds && ctx.Err() == nil; r++ {
			for _, sys := range []system{sysSluice, sysKafka} {
				s.session(ctx, sys, r, "txn", func(b broker) error { return s.txnRuns(ctx, b, sys, r) })
			}
		}
	}
	for _, n := range clusters {
		for r := 1; r <= s.prof.Rounds && ctx.Err() == nil; r++ {
			for _, sys := range []system{sysSluice, sysKafka} {
				s.clusterSession(ctx, sys, n, r, "txn", func(b target) error { return s.txnRuns(ctx, b, sys, r) })
			}
		}
	}
}

func txnOverPlainRow(sp produceSpec) row {
	unit := "partitions"
	if sp.Partitions == 1 {
		unit = "partition"
	}
	return row{
		Key:   "txn-over-plain-" + sp.key(),
		Label: fmt.Sprintf("Transactional over plain (acks=all, idempotent) produce throughput, same session, plain run just before, %d %s", sp.Partitions, unit) + nodesLabel(sp.Nodes),
		Unit:  "ratio", Format: "%.2f", HigherIsBetter: true,
	}
}

// txnRuns measures EndTxn latency first, then each transactional produce row right after
// a plain acks=all run of the same shape, whose throughput it is divided by (what the
// transactions cost each system, apart from how warm its JVM is): the loop's small
// transactions also warm the transaction coordinator's path (Kafka's JIT) before the
// throughput runs, and the runs, killed mid-transaction, come last so their open
// transactions are not aborted under a later measurement.
func (s *suite) txnRuns(ctx context.Context, b target, sys system, round int) error {
	s.endTxnLatency(ctx, b, sys, round)
	for _, sp := range txnProduceSpecs(b.Nodes()) {
		plain := sp
		plain.TxnDurationMs = 0
		base, err := s.measureProduce(ctx, b, "plain-"+plain.key(), plain)
		txn, ok := s.produceRun(ctx, b, sys, round, sp)
		switch {
		case err != nil:
			s.res.fail(txnOverPlainRow(sp), sys, round, "plain run: "+err.Error())
		case ok && base.Stats.RecordsPerSec > 0:
			s.res.add(txnOverPlainRow(sp), sys, round, txn/(base.Stats.RecordsPerSec*recordSize/1e6), load())
		}
	}
	return nil
}

func (s *suite) endTxnLatency(ctx context.Context, b target, sys system, round int) {
	nodes := b.Nodes()
	p50, p99, rate := endTxnRow("p50", nodes), endTxnRow("p99", nodes), txnRateRow(nodes)
	if err := createTopic(ctx, b, endTxnTopic, 1); err != nil {
		s.res.fail(p99, sys, round, err.Error())
		return
	}
	cfg := endTxnLoopConfig{
		Bootstrap: b.Bootstrap(), Topic: endTxnTopic, TxnID: "bench-endtxn",
		Warm: s.prof.TxnWarm, Measure: s.prof.TxnMeasure, MaxSeconds: s.prof.TxnMaxSecs,
	}
	run, err := runEndTxnLoop(ctx, cfg)
	if err != nil {
		s.res.fail(p99, sys, round, err.Error())
		return
	}
	l := load()
	commits := run.commitMs()
	s.res.add(p50, sys, round, percentile(commits, 50), l)
	s.res.add(p99, sys, round, percentile(commits, 99), l)
	s.res.add(rate, sys, round, run.ratePerSec(), l)
	s.log.Info("EndTxn latency", "system", sys, "nodes", nodes, "transactions", len(commits),
		"p50_ms", percentile(commits, 50), "p99_ms", percentile(commits, 99), "txn_per_s", run.ratePerSec())
	s.res.note("round %d %s%s EndTxn loop: %s.", round, sys, nodesLabel(nodes), run.describe(cfg))
}

// renderTxnMethod says how the transaction rows were measured.
func renderTxnMethod(b *strings.Builder, pr profile) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format+"\n", args...) }
	p("- Transaction rows: a session of their own per round (fresh broker, the same warm-up).")
	p("  First the EndTxn loop: franz-go (the repository's version) with a transactional id, linger 0,")
	p("  one transaction after another on a 1-partition topic: BeginTransaction, one 1 KiB record")
	p("  produced and acknowledged (ProduceSync), then EndTransaction(TryCommit), timed. %d", pr.TxnWarm)
	p("  transactions (or a quarter of %d s) are warm-up, the next %d are measured unless the loop", pr.TxnMaxSecs, pr.TxnMeasure)
	p("  reaches %d s first. The latency rows are nearest-rank percentiles of the timed commits; with", pr.TxnMaxSecs)
	p("  the record already acknowledged, a commit is the EndTxn round trip (plus any client retry")
	p("  of CONCURRENT_TRANSACTIONS), what the Java client's commitTransaction waits for. The rate")
	p("  row is measured transactions over the loop's time: it includes, under Transactions V2, the")
	p("  next transaction's first produce waiting for the previous one's markers. The notes give")
	p("  each loop's requests per transaction (a kgo hook; above 1 means retries) and EndTxn's")
	p("  round trip on the wire.")
	p("- Then transactional produce throughput: `producer-perf-test --throughput -1")
	p("  --reporting-interval 1000 --transactional-id bench-TOPIC --transaction-duration-ms %d` (the", txnDurationMs)
	p("  Java producer commits every %d ms; acks=all, idempotent) to a new topic of 1, then 16", txnDurationMs)
	p("  partitions: %d one-second windows of warm-up, %d measured (records over the windows' own", pr.Warm, pr.Measure)
	p("  durations), then the tool is killed, in the middle of a transaction, which the broker aborts")
	p("  after transaction.timeout.ms, after the session. CPU per GB is the broker's over the same")
	p("  windows. Just before each, the same run without transactions (acks=all, idempotent, its own")
	p("  topic) gives the divisor of the \"transactional over plain\" row: what transactions cost")
	p("  each system in the same session, however warm its JVM is.")
}
