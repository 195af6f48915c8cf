package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/verify"
	"github.com/sluice-io/sluice/internal/verify/nemesis"
)

// verifyOptions are the flags of `sluice verify`.
type verifyOptions struct {
	brokers       string
	commandConfig string
	nodes         int
	rf            int16
	minISR        int
	partitions    int32
	topic         string
	workload      string
	producers     int
	consumers     int
	rate          int
	duration      time.Duration
	faults        []string
	faultInterval time.Duration
	faultCount    int
	faultHold     time.Duration
	seed          int64
	results       string
	binary        string
	overrides     []string
	verbose       bool
}

func newVerifyCommand() *cobra.Command {
	o := &verifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Prove no acknowledged write is lost, duplicated or reordered under faults (a Jepsen-style check)",
		Long: "Run a workload against a cluster while injecting faults, then read every partition back and check the " +
			"history for lost writes, duplicates, reordering, inconsistent offsets, poll skips, aborted reads, torn " +
			"transactions and committed offsets going back.\n\n" +
			"Without --brokers it starts --nodes local sluice processes (--binary, this executable by default) on free " +
			"127.0.0.1 ports and injects every fault it can: kill -9 and restart, SIGSTOP/SIGCONT, network cuts, " +
			"controlled shutdowns, leader elections, reassignments. With --brokers it uses that cluster as it is and " +
			"injects only the faults an admin client can cause.\n\n" +
			"Each run writes history.jsonl, summary.txt, anomalies.txt and report.html (and the started cluster's " +
			"data and logs) under --results/<workload>-<UTC time>/. Exit status: 0 when no anomaly was found, 1 when " +
			"some were, 2 when the run could not complete (no verdict).",
		Example: `  sluice verify
  sluice verify --workload group --duration 5m --fault-count 50 --faults kill,pause
  sluice verify --duration 20m --fault-count 120 --fault-interval 8s --seed 42
  sluice verify --brokers kafka-1:9092,kafka-2:9092 --replication-factor 3 --command-config client.properties`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runVerify(cmd, o)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitError{code: ExitIncomplete, err: fmt.Errorf("%w (see sluice verify --help)", err)}
	})
	addVerifyFlags(cmd, o)
	return cmd
}

func addVerifyFlags(cmd *cobra.Command, o *verifyOptions) {
	f := cmd.Flags()
	f.StringVarP(&o.brokers, "brokers", "b", "", "an existing cluster's bootstrap brokers (host:port,...): nothing is started, only admin-API faults are injected")
	f.StringVar(&o.commandConfig, "command-config", "", "Kafka client properties with the security settings (security.protocol, ssl.*, sasl.*) for --brokers")
	f.IntVar(&o.nodes, "nodes", 3, "local sluice processes to start (without --brokers)")
	f.Int16VarP(&o.rf, "replication-factor", "r", 3, "the topic's replication factor")
	f.IntVar(&o.minISR, "min-insync-replicas", 2, "the topic's min.insync.replicas")
	f.Int32VarP(&o.partitions, "partitions", "p", 6, "the topic's partitions")
	f.StringVar(&o.topic, "topic", "", "the topic the workload writes (default: verify-<workload>-<UTC time>, new for each run; an earlier run's topic holds values this run would count as anomalies)")
	f.StringVar(&o.workload, "workload", verify.WorkloadQueue, "queue (producers and a consumer group), group (members joining, leaving, killed) or txn (transactions, read-committed readers)")
	f.IntVar(&o.producers, "producers", 2, "producers")
	f.IntVar(&o.consumers, "consumers", 2, "consumers (group members)")
	f.IntVar(&o.rate, "rate", 200, "sends per second over all producers")
	f.DurationVarP(&o.duration, "duration", "d", 60*time.Second, "how long the workload runs at most (it stops 5s after the last of --fault-count faults when that comes first)")
	f.StringSliceVar(&o.faults, "faults", nil, "fault kinds to inject, comma-separated, or none (default: every kind the cluster supports; one of "+strings.Join(kindNames(nemesis.Kinds), ", ")+")")
	f.DurationVar(&o.faultInterval, "fault-interval", 5*time.Second, "quiet time before each fault (after the previous one is healed)")
	f.IntVar(&o.faultCount, "fault-count", 0, "faults to inject before stopping (0: until --duration)")
	f.DurationVar(&o.faultHold, "fault-hold", 0, "how long a fault lasts before it is healed (0: the nemesis's default)")
	f.Int64Var(&o.seed, "seed", 0, "seed of the fault schedule and of the workload's choices (0: from the clock; printed, so a run can be repeated)")
	f.StringVar(&o.results, "results", "verify-results", "directory the run's results directory is made in")
	f.StringVar(&o.binary, "binary", "", "the sluice executable to start the cluster with (default: this executable)")
	f.StringArrayVar(&o.overrides, "override", nil, "server property for the started nodes, as kafka-server-start's --override (key=value; repeatable)")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "log the parts' debug lines too")
}

// kindNames lists fault kinds as strings, sorted.
func kindNames(kinds []nemesis.Kind) []string {
	out := make([]string, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, string(k))
	}
	sort.Strings(out)
	return out
}

func runVerify(cmd *cobra.Command, o *verifyOptions) error {
	cfg, err := o.config(cmd)
	if err != nil {
		return &exitError{code: ExitIncomplete, err: err}
	}
	ctx, stop := interruptible(cmd)
	defer stop()
	fmt.Fprintf(cmd.ErrOrStderr(), "sluice verify: seed %d (repeat the schedule with --seed %d)\n", cfg.Seed, cfg.Seed)
	res, err := verify.Run(ctx, cfg, cmd.OutOrStdout())
	if errors.Is(err, verify.ErrIncomplete) {
		return &exitError{code: ExitIncomplete, err: fmt.Errorf("no verdict: %w", err)}
	}
	if err != nil {
		return &exitError{code: ExitIncomplete, err: err}
	}
	if !res.Valid() {
		return &exitError{code: ExitAnomalies, err: fmt.Errorf("%d anomalies found (%s)", len(res.Anomalies), byKindText(res.ByKind()))}
	}
	return nil
}

// config turns the flags into a run's configuration.
func (o *verifyOptions) config(cmd *cobra.Command) (verify.Config, error) {
	cfg := verify.Config{
		Nodes: o.nodes, ReplicationFactor: o.rf, MinInsyncReplicas: o.minISR, Partitions: o.partitions,
		Topic: o.topic, Workload: o.workload, Producers: o.producers, Consumers: o.consumers, Rate: o.rate,
		Duration: o.duration, FaultInterval: o.faultInterval, FaultCount: o.faultCount, FaultHold: o.faultHold,
		Seed: o.seed, Results: o.results, Binary: o.binary,
		Command: "sluice " + strings.Join(os.Args[1:], " "),
	}
	if err := o.checkRanges(); err != nil {
		return cfg, err
	}
	for _, s := range strings.Split(o.brokers, ",") {
		if s = strings.TrimSpace(s); s != "" {
			cfg.Brokers = append(cfg.Brokers, s)
		}
	}
	if len(cfg.Brokers) > 0 {
		for _, local := range []string{"nodes", "binary", "override"} {
			if cmd.Flags().Changed(local) {
				return cfg, fmt.Errorf("--%s shapes the cluster sluice verify starts; --brokers names an existing one: give one of them", local)
			}
		}
	} else if int(o.rf) > o.nodes {
		return cfg, fmt.Errorf("--replication-factor %d is above --nodes %d", o.rf, o.nodes)
	}
	if o.commandConfig != "" {
		opts, err := commandConfigOpts(o.commandConfig)
		if err != nil {
			return cfg, err
		}
		cfg.ClientOpts = append([]kgo.Opt(nil), opts...)
	}
	faults, err := parseFaults(o.faults)
	if err != nil {
		return cfg, err
	}
	cfg.Faults = faults
	if cfg.ServerConfig, err = parseOverrides(o.overrides); err != nil {
		return cfg, err
	}
	if cfg.Binary == "" && len(cfg.Brokers) == 0 {
		if cfg.Binary, err = os.Executable(); err != nil {
			return cfg, fmt.Errorf("finding this executable (give --binary): %w", err)
		}
	}
	if cfg.Seed == 0 {
		cfg.Seed = time.Now().UnixNano()
	}
	level := slog.LevelInfo
	if o.verbose {
		level = slog.LevelDebug
	}
	cfg.Log = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
	return cfg, nil
}

// checkRanges refuses numbers no run can use, naming the flag.
func (o *verifyOptions) checkRanges() error {
	switch {
	case o.nodes < 1:
		return fmt.Errorf("--nodes %d: at least 1", o.nodes)
	case o.rf < 1:
		return fmt.Errorf("--replication-factor %d: at least 1", o.rf)
	case o.minISR < 1:
		return fmt.Errorf("--min-insync-replicas %d: at least 1", o.minISR)
	case o.minISR > int(o.rf):
		return fmt.Errorf("--min-insync-replicas %d is above --replication-factor %d: every acks=all send would fail", o.minISR, o.rf)
	case !slices.Contains(verify.Workloads, o.workload):
		return fmt.Errorf("--workload %q: want one of %s", o.workload, strings.Join(verify.Workloads, ", "))
	case o.partitions < 1:
		return fmt.Errorf("--partitions %d: at least 1", o.partitions)
	case o.producers < 1 || o.consumers < 1:
		return fmt.Errorf("--producers and --consumers: at least 1")
	case o.rate < 1:
		return fmt.Errorf("--rate %d: at least 1 send per second", o.rate)
	case o.duration <= 0:
		return fmt.Errorf("--duration %v: must be positive", o.duration)
	case o.faultInterval <= 0:
		return fmt.Errorf("--fault-interval %v: must be positive", o.faultInterval)
	case o.faultCount < 0 || o.faultHold < 0:
		return fmt.Errorf("--fault-count and --fault-hold must not be negative")
	}
	return nil
}

// parseFaults checks --faults against the nemesis's kinds; nil means every
// supported kind, "none" no fault at all.
func parseFaults(names []string) ([]nemesis.Kind, error) {
	if len(names) == 0 {
		return nil, nil
	}
	if len(names) == 1 && names[0] == "none" {
		return []nemesis.Kind{}, nil
	}
	known := map[string]bool{}
	for _, k := range nemesis.Kinds {
		known[string(k)] = true
	}
	var out []nemesis.Kind
	for _, n := range names {
		n = strings.TrimSpace(n)
		if !known[n] {
			return nil, fmt.Errorf("--faults %q: unknown fault kind; known: %s", n, strings.Join(kindNames(nemesis.Kinds), ", "))
		}
		out = append(out, nemesis.Kind(n))
	}
	return out, nil
}

// parseOverrides reads --override key=value pairs.
func parseOverrides(pairs []string) (map[string]string, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(pairs))
	for _, p := range pairs {
		k, v, err := splitKeyValue("--override", p)
		if err != nil {
			return nil, err
		}
		m[k] = v
	}
	return m, nil
}

// byKindText is "lost-write 3, duplicate 1", kinds sorted.
func byKindText(m map[string]int) string {
	kinds := make([]string, 0, len(m))
	for k := range m {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
