// Command compare runs Sluice and the pinned Apache Kafka side by side on this machine with
// Kafka's own perf tools (issue 10) and writes a results file of medians, spreads and
// Sluice/Kafka ratios. bench/compare builds the binaries and runs it; see that script.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		profileName = flag.String("profile", "quick", "quick (under 10 minutes) or full (about 45 minutes, plus the omb, compression, connections and partitions phases)")
		rounds      = flag.Int("rounds", 0, "rounds per system (default: the profile's, 3; at least 3 for a results file)")
		repo        = flag.String("repo", ".", "repository root (for bench/kafka-ref, bench/storage, KAFKA_VERSION)")
		sluiceBin   = flag.String("sluice", "", "sluice binary to benchmark (required)")
		commit      = flag.String("commit", "", "what the sluice binary was built from, for the report")
		out         = flag.String("out", "", "results file (default: print only)")
		scratch     = flag.String("scratch", "", "scratch dir for data dirs (default: a new dir under TMPDIR)")
		skipMachine = flag.Bool("skip-machine", false, "skip the machine figures (for checking the suite)")
		phases      = flag.String("phases", "", "phases to run (default: produce,catch-up,txn; the full profile adds tls, omb, compression, connections and partitions), comma-separated: produce, catch-up, txn (transactional produce and EndTxn latency), tls (produce, read and new-connection rate over TLS, and with SCRAM; single broker), groups (issue 17: rebalance after a member leaves, consumer and classic protocols, and the heartbeat cost of 1,000 consumer-protocol members; single broker), omb (issue 24: the OpenMessaging Benchmark's shapes, 100 partitions, keyed, 4 and 32 producers, max rate and end-to-end latency at 50 MB/s; single broker), compression (acks=1, 16 partitions, zstd and lz4, text values; single broker), connections (issue 24: broker memory per idle connection with 1,000 idle connections open, and 100 producers' max rate and end-to-end p99 at 50 MB/s without and with them; single broker), partitions (issue 24: one topic of 10,000 partitions (1,000 in the quick profile): creation time, produce to all of them, RSS idle and after, restart after kill -9 and a clean stop to a produce on every partition, nothing acknowledged lost, then end-to-end latency at a fixed 5 MB/s over every partition; single broker), pprof (one more Sluice session, profiled, on the produce row with the lowest Sluice/Kafka ratio)")
		command     = flag.String("command", "", "the command line to print in the report")
		pprofDir    = flag.String("pprof-dir", "", "where the pprof phase keeps its profiles (default: the scratch dir)")
		systems     = flag.String("systems", "sluice,kafka", "systems to run, comma-separated (sluice, kafka); one system is for iterating and writes no ratios")
		nodesFlag   = flag.String("nodes", "", "cluster sizes to run, comma-separated: 1 (every single-broker row) and/or 3 (the 3-node rows); default: the profile's (quick 1, full 1,3)")
	)
	flag.Parse()
	prof, err := profileNamed(*profileName)
	if err != nil {
		return err
	}
	if *rounds > 0 {
		prof.Rounds = *rounds
	}
	if *nodesFlag != "" {
		if prof.Nodes, err = parseNodes(*nodesFlag); err != nil {
			return err
		}
	}
	if *phases == "" {
		*phases = defaultPhases(prof.Name)
	}
	want, err := parsePhases(*phases)
	if err != nil {
		return err
	}
	if *sluiceBin == "" {
		return fmt.Errorf("--sluice is required")
	}
	root, err := filepath.Abs(*repo)
	if err != nil {
		return err
	}
	bin, err := filepath.Abs(*sluiceBin)
	if err != nil {
		return err
	}
	if *scratch == "" {
		if *scratch, err = os.MkdirTemp("", "sluice-compare-"); err != nil {
			return fmt.Errorf("scratch dir: %w", err)
		}
		defer os.RemoveAll(*scratch)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	started := time.Now().UTC()
	info := runInfo{
		Command:    *command,
		Commit:     *commit,
		Started:    started.Format("2006-01-02 15:04 UTC"),
		LoadBefore: load(),
		Facts:      collectFacts(root),
		Prof:       prof,
		Phases:     want,
	}
	if info.Command == "" {
		info.Command = "bench/compare --profile " + prof.Name
	}
	if !*skipMachine {
		log.Info("machine figures", "load", load())
		info.Machine = measureMachine(ctx, root, *scratch, prof.Name == "quick", prof.IperfSecs)
	}

	skip, err := parseSystems(*systems)
	if err != nil {
		return err
	}
	if len(skip) > 0 && *out != "" {
		return fmt.Errorf("--out needs both systems (--systems %s)", *systems)
	}
	s := &suite{prof: prof, kafkaRef: filepath.Join(root, "bench", "kafka-ref"), sluiceBin: bin, scratch: *scratch, res: newResults(), log: log, skip: skip}
	// Without the catch-up phase there is no reader to choose.
	s.groupConsumerDecided = !want["catch-up"]
	if *pprofDir == "" {
		*pprofDir = *scratch
	}
	single := slices.Contains(prof.Nodes, 1)
	clusters := slices.DeleteFunc(slices.Clone(prof.Nodes), func(n int) bool { return n == 1 })
	if want["produce"] {
		if single {
			for r := 1; r <= prof.Rounds && ctx.Err() == nil; r++ {
				s.produceSession(ctx, sysSluice, r)
				s.produceSession(ctx, sysKafka, r)
			}
			if err := s.setRate(); err != nil {
				s.res.note("%v", err)
			}
		}
		for _, n := range clusters {
			for r := 1; r <= prof.Rounds && ctx.Err() == nil; r++ {
				s.clusterProduceSession(ctx, sysSluice, n, r)
				s.clusterProduceSession(ctx, sysKafka, n, r)
			}
		}
	}
	if want["catch-up"] {
		if single {
			for r := 1; r <= prof.Rounds && ctx.Err() == nil; r++ {
				s.catchUpSession(ctx, sysSluice, r)
				s.catchUpSession(ctx, sysKafka, r)
			}
		}
		for _, n := range clusters {
			for r := 1; r <= prof.Rounds && ctx.Err() == nil; r++ {
				s.clusterCatchUpSession(ctx, sysSluice, n, r)
				s.clusterCatchUpSession(ctx, sysKafka, n, r)
			}
		}
	}
	if want["txn"] {
		s.txnPhase(ctx, single, clusters)
	}
	if want["tls"] {
		if single {
			s.tlsPhase(ctx)
		} else {
			s.res.note("The TLS rows are single-broker rows; --nodes without 1 ran none.")
		}
	}
	if want["groups"] {
		if single {
			s.groupsPhase(ctx)
		} else {
			s.res.note("The groups rows are single-broker rows; --nodes without 1 ran none.")
		}
	}
	if want["omb"] || want["compression"] || want["connections"] {
		s.workloadPhases(ctx, want, single)
	}
	if want["partitions"] {
		if single {
			s.partitionsPhase(ctx)
		} else {
			s.res.note("The partitions rows are single-broker rows; --nodes without 1 ran none.")
		}
	}
	if want["pprof"] && single {
		info.Profiles = s.profileWorstRow(ctx, *pprofDir)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("interrupted: %w", err)
	}
	info.LoadAfter = load()
	info.Elapsed = time.Since(started).Round(time.Second).String()
	report := renderReport(info, s.res)
	fmt.Print(report)
	if *out != "" {
		if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(*out, []byte(report), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", *out, err)
		}
		log.Info("wrote results", "file", *out)
	}
	return nil
}
