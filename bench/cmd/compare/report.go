package main

import (
	"fmt"
	"slices"
	"strings"
)

// runInfo is everything the report says about how the run was made.
type runInfo struct {
	Command    string
	Commit     string
	Started    string
	Elapsed    string
	LoadBefore string
	LoadAfter  string
	Profiles   string
	Facts      machineFacts
	Machine    machineLimits
	Prof       profile
	Phases     map[string]bool
}

func sortedStrings(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// renderReport writes the results file: facts, the comparison table, the machine limits,
// how each row was measured, notes, failures and every raw value.
func renderReport(info runInfo, res *results) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	res.mu.Lock()
	defer res.mu.Unlock()

	p("# Sluice vs Apache Kafka %s, %s (%s profile)", info.Facts.Kafka, info.Started, info.Prof.Name)
	p("")
	p("Produced by `%s`; Sluice built from %s. Run time %s.", info.Command, info.Commit, info.Elapsed)
	p("")
	p("| | |")
	p("|---|---|")
	p("| CPU | %s, %s CPUs online |", info.Facts.CPU, info.Facts.Cores)
	p("| memory | %s |", info.Facts.Memory)
	p("| kernel | %s |", info.Facts.Kernel)
	p("| go | %s |", info.Facts.Go)
	p("| java | %s |", info.Facts.Java)
	p("| Kafka | %s from Maven Central via bench/kafka-ref (JVM flags of kafka-server-start.sh: -Xmx1G -Xms1G, G1) |", info.Facts.Kafka)
	p("| load average before / after | %s / %s |", info.LoadBefore, info.LoadAfter)
	p("")
	p("## Sluice vs Kafka")
	p("")
	p("Each system ran %d rounds, alternating Sluice then Kafka (A B A B), each session on a fresh", info.Prof.Rounds)
	p("broker (new data dir, free 127.0.0.1 ports). Figures are medians with (min–max) over the")
	p("rounds; the ratio divides the Sluice median by the Kafka median.")
	p("")
	p("| row | unit | Sluice | Kafka | Sluice/Kafka | better is |")
	p("|---|---|---:|---:|---:|---|")
	for _, rw := range res.rows {
		sv := valuesOf(res.values[rw.Key][sysSluice])
		kv := valuesOf(res.values[rw.Key][sysKafka])
		sm, sok := medianOf(sv)
		km, kok := medianOf(kv)
		better := "lower"
		if rw.HigherIsBetter {
			better = "higher"
		}
		p("| %s | %s | %s | %s | %s | %s |", rw.Label, rw.Unit, summary(sv, rw.Format), summary(kv, rw.Format), ratio(sm, km, sok, kok), better)
	}
	p("")
	if !slices.ContainsFunc(info.Prof.Nodes, func(n int) bool { return n > 1 }) {
		p("The 3-node rows (RF=3, min.insync.replicas=2) were not run: `bench/compare --nodes 3`")
		p("(or `--nodes 1,3`, the full profile's default) runs them.")
		p("")
	}
	renderMachine(&b, info)
	renderMethod(&b, info.Prof, info.Phases)
	if len(res.notes) > 0 {
		p("## Notes from this run")
		p("")
		for _, n := range res.notes {
			p("- %s", n)
		}
		p("")
	}
	if len(res.failures) > 0 {
		p("## Failed runs")
		p("")
		p("| round | system | row | reason |")
		p("|---|---|---|---|")
		for _, f := range res.failures {
			p("| %d | %s | %s | %s |", f.Round, f.System, f.Row, strings.ReplaceAll(truncate(f.Reason, 400), "|", "\\|"))
		}
		p("")
	}
	if info.Profiles != "" {
		p("## Profile of Sluice on its worst row")
		p("")
		p("%s", strings.TrimRight(info.Profiles, "\n"))
		p("")
	}
	p("## Every value")
	p("")
	p("| row | system | round | value | load average |")
	p("|---|---|---:|---:|---|")
	for _, rw := range res.rows {
		for _, sys := range []system{sysSluice, sysKafka} {
			for _, s := range res.values[rw.Key][sys] {
				p("| %s | %s | %d | "+rw.Format+" %s | %s |", rw.Key, sys, s.Round, s.Value, rw.Unit, s.Load)
			}
		}
	}
	p("")
	if info.Machine.StorageSection != "" {
		p("## Appendix: bench/storage machine figures (exact commands)")
		p("")
		p("From `%s` in this run; its Go benchmarks are not quoted here.", info.Machine.StorageCommand)
		p("")
		p("%s", info.Machine.StorageSection)
		p("")
	}
	return b.String()
}

func renderMachine(b *strings.Builder, info runInfo) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format+"\n", args...) }
	m := info.Machine
	p("## The machine's limits (same run, before the sessions)")
	p("")
	p("| figure | value | command |")
	p("|---|---:|---|")
	for _, r := range m.StorageRows {
		p("| %s | %s | `%s` (fio; exact fio commands in the appendix) |", r[0], r[1], m.StorageCommand)
	}
	if m.StorageErr != "" {
		p("| storage figures | failed: %s | `%s` |", strings.ReplaceAll(truncate(m.StorageErr, 300), "|", "\\|"), m.StorageCommand)
	}
	if len(m.IperfMBps) > 0 {
		p("| loopback TCP, one stream, 3 runs | %s MB/s | `%s` |", summary(m.IperfMBps, "%.0f"), m.IperfCommand)
	}
	if m.IperfErr != "" {
		p("| loopback TCP | failed: %s | `%s` |", m.IperfErr, m.IperfCommand)
	}
	p("")
}

// renderMethod says how the rows of the phases that ran were measured.
func renderMethod(b *strings.Builder, pr profile, phases map[string]bool) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format+"\n", args...) }
	p("## How each row was measured")
	p("")
	p("- Both systems are driven by Kafka's own tools from the pinned jars (`bench/kafka-ref tool`),")
	p("  1 KiB records (`--record-size 1024`), producer defaults otherwise (linger.ms 5, batch.size")
	p("  16 KiB). MB/s is 10^6 bytes of record values per second.")
	p("- Every session first produces at full speed for %d s (acks=1, 16 partitions, a topic no", pr.BrokerWarm)
	p("  measurement reads), so Kafka's fresh JVM has compiled its hot paths; Sluice gets the same.")
	if phases["produce"] || phases["catch-up"] {
		renderProduceMethod(b, pr)
	}
	if phases["txn"] {
		renderTxnMethod(b, pr)
	}
	if phases["tls"] {
		renderTLSMethod(b, pr)
	}
	if phases["groups"] {
		renderGroupsMethod(b)
	}
	if phases["omb"] {
		renderOMBMethod(b, pr)
	}
	if phases["compression"] {
		renderCompressionMethod(b)
	}
	if phases["connections"] {
		renderConnMethod(b, pr)
	}
	if phases["partitions"] {
		renderPartsMethod(b, pr)
	}
	for _, n := range pr.Nodes {
		if n <= 1 {
			continue
		}
		p("- %d-node rows (labels say \"%d nodes\"): a session starts %d combined broker+controller", n, n, n)
		p("  nodes on 127.0.0.1 (Sluice: `sluice storage format` then `sluice server` per node, a static")
		p("  quorum of all %d; Kafka: `bench/kafka-ref start --nodes %d`), internal topics replicated to", n, n)
		p("  every node, and waits until all %d brokers are listed. Topics have replication factor %d and", n, n)
		p("  min.insync.replicas %d; a run starts once every partition has all its replicas in sync.", clusterMinISR(n))
		p("  The warm-up and the workloads are those above (no fixed-rate run), against the whole")
		p("  bootstrap list; CPU is utime+stime summed over the %d processes, peak RSS the sum of their", n)
		p("  VmHWM. No restarts on a cluster.")
	}
	p("")
}

func renderProduceMethod(b *strings.Builder, pr profile) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format+"\n", args...) }
	p("- Produce throughput: `producer-perf-test --throughput -1 --reporting-interval 1000` with")
	p("  `acks=1 enable.idempotence=false` or `acks=all enable.idempotence=true`, to a new topic of")
	p("  1 or 16 partitions. The first %d one-second progress windows are warm-up; the next %d are", pr.Warm, pr.Measure)
	p("  the measurement (records over the windows' own durations); then the tool is killed.")
	p("- Broker CPU per GB: utime+stime of the broker process (/proc/PID/stat) over the same")
	p("  windows (sampled when their lines arrive), per 10^9 bytes of record values.")
	p("- Peak RSS: VmHWM from /proc/PID/status of the broker process (the JVM for Kafka).")
	p("- Fixed-rate latency: `producer-perf-test --throughput R --warmup-records R*%d", pr.RateWarm)
	p("  --num-records R*%d` (acks=all, idempotent, 1 partition); the steady-state summary's", pr.RateWarm+pr.RateMeasure)
	p("  percentiles (the tool prints whole milliseconds) and max. R is half the lower of the two")
	p("  systems' medians of that configuration's full-speed row, so it runs in a second phase of")
	p("  %d rounds after all produce rounds, after the fill and the catch-up read of that phase.", pr.Rounds)
	p("- Fill and catch-up: `producer-perf-test --num-records %d` (acks=1, 16 partitions, %d MiB)", pr.FillBytes/recordSize, pr.FillBytes>>20)
	p("  to completion, then the whole topic is read from the start (see the read row's label for")
	p("  the reader); the time includes the client's connect and first metadata.")
	p("- Start-up: on the filled log (its size is the log-segment row), the broker is killed with")
	p("  SIGKILL right after the fixed-rate run and started again; the time runs from exec to the")
	p("  first acknowledged produce (franz-go, acks=all, not idempotent, polling the port every")
	p("  5 ms and retrying every 10 ms). Then SIGTERM, wait for exit (the shutdown row), and the")
	p("  same start-up timing after the clean stop. Kafka is relaunched with the JVM's own command")
	p("  line as kafka-ref started it.")
}
