// Command tail-timeline runs the compare suite's fixed-rate produce (Kafka's
// producer-perf-test at a fixed --throughput, acks=all, idempotent, 1 partition,
// 1 KiB records, after a fill of a 16-partition topic) against one fresh Sluice or
// Kafka broker, and records beside it, every interval: the producer's per-window
// average and maximum latency (perf-test's --reporting-interval), page-cache
// Dirty/Writeback and the pages written, pressure stall (PSI) of I/O and CPU, the
// load average, run-queue wait of the broker and of the producer JVM, the kernel
// function every broker/producer thread in D state waits in, the partition's
// segment count (rolls), Sluice's GC (GODEBUG=gctrace=1) and the JVMs' GC and
// safepoint pauses (-Xlog through JAVA_TOOL_OPTIONS). It writes timeline.tsv and
// events.tsv to --out and prints the windows around the worst latencies.
//
//	flock /tmp/eco-heavy.lock go run ./bench/ops/tail-timeline --system sluice \
//	    --sluice /tmp/tail/sluice --rate 41614 --out /tmp/tail/run1
package main

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

type config struct {
	system   string
	sluice   string
	kafkaRef string
	rate     int
	warm     int
	measure  int
	fill     int64
	read     bool
	out      string
	interval time.Duration
	top      int
	props    string
}

func main() {
	var c config
	flag.StringVar(&c.system, "system", "sluice", "sluice or kafka")
	flag.StringVar(&c.sluice, "sluice", "/tmp/tail/sluice", "sluice binary")
	flag.StringVar(&c.kafkaRef, "kafka-ref", "bench/kafka-ref", "the Kafka reference kit")
	flag.IntVar(&c.rate, "rate", 41614, "records/s of the fixed-rate run (the full profile's of 2026-11-30)")
	flag.IntVar(&c.warm, "warm", 15, "warm-up seconds (perf-test --warmup-records; the full profile's)")
	flag.IntVar(&c.measure, "measure", 30, "measured seconds")
	flag.Int64Var(&c.fill, "fill", 2<<30, "bytes written to the 16-partition topic first (0: none)")
	flag.BoolVar(&c.read, "read", true, "read the fill back with consumer-perf-test, as the suite does")
	flag.StringVar(&c.out, "out", "", "output directory (required)")
	flag.DurationVar(&c.interval, "interval", 100*time.Millisecond, "sampling and reporting interval")
	flag.IntVar(&c.top, "top", 6, "windows to print around the worst latencies")
	flag.StringVar(&c.props, "props", "acks=all enable.idempotence=true", "producer properties")
	flag.Parse()
	if c.out == "" || (c.system != "sluice" && c.system != "kafka") {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c); err != nil {
		slog.Error("tail-timeline", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c config) error {
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	out, err := filepath.Abs(c.out)
	if err != nil {
		return err
	}
	c.out = out
	b, err := startBroker(ctx, c)
	if err != nil {
		return err
	}
	defer b.close()
	slog.Info("broker up", "system", c.system, "pid", b.pid, "bootstrap", b.bootstrap)
	t := tools{kafkaRef: c.kafkaRef, bootstrap: b.bootstrap, out: c.out}
	if c.fill > 0 {
		if err := t.fillAndRead(ctx, c.fill, c.read); err != nil {
			return err
		}
	}
	if err := t.createTopic(ctx, "fixed-rate", 1); err != nil {
		return err
	}
	rec := newRecorder(c.out, b, filepath.Join(b.dataDir, "fixed-rate-0"))
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { rec.sample(sctx, c.interval); close(done) }()
	load0 := loadavg()
	windows, perr := t.fixedRate(ctx, c, rec)
	load1 := loadavg()
	cancel()
	<-done
	rec.addGCLogs(c.out)
	if perr != nil {
		return perr
	}
	rep := report{c: c, windows: windows, rec: rec, load0: load0, load1: load1, gctrace: b.gcEvents()}
	return rep.write()
}

func loadavg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return string(raw[:len(raw)-1])
}

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

func stamp(t time.Time) string { return t.UTC().Format("15:04:05.000") }
