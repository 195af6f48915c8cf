package main

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-io/sluice/bench/internal/perftest"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const recordSize = 1024

// tools runs Kafka's CLI tools against the broker.
type tools struct {
	kafkaRef  string
	bootstrap string
	out       string
}

// window is one perf-test report: the records acknowledged in the interval that
// ended when the line was read, their average and maximum latency.
type window struct {
	at      time.Time
	records int64
	avgMs   float64
	maxMs   float64
}

func (t tools) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, t.kafkaRef, append([]string{"tool", name}, args...)...)
	cmd.Env = append(os.Environ(), "JAVA_TOOL_OPTIONS="+jvmGCOpts(t.out))
	return cmd
}

func (t tools) createTopic(ctx context.Context, topic string, partitions int) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(t.bootstrap))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		resp, err := adm.CreateTopic(ctx, int32(partitions), 1, nil, topic)
		if err == nil && resp.Err == nil {
			break
		}
		if ctx.Err() != nil {
			return fmt.Errorf("create topic %s: %v %v", topic, err, resp.Err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for ctx.Err() == nil {
		md, err := adm.Metadata(ctx, topic)
		if err == nil {
			if td, ok := md.Topics[topic]; ok && td.Err == nil && len(td.Partitions) == partitions {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("topic %s: no metadata: %w", topic, ctx.Err())
}

// fillAndRead writes n bytes to a 16-partition topic at full speed (acks=1) and
// reads them back, as the suite's catch-up session does before its fixed-rate run.
func (t tools) fillAndRead(ctx context.Context, bytes int64, read bool) error {
	if err := t.createTopic(ctx, "catch-up", 16); err != nil {
		return err
	}
	n := strconv.FormatInt(bytes/recordSize, 10)
	start := time.Now()
	fill := t.command(ctx, "producer-perf-test", "--bootstrap-server", t.bootstrap, "--topic", "catch-up",
		"--num-records", n, "--throughput", "-1", "--record-size", strconv.Itoa(recordSize),
		"--reporting-interval", "5000", "--command-property", "acks=1", "enable.idempotence=false")
	if outb, err := fill.CombinedOutput(); err != nil {
		return fmt.Errorf("fill: %w: %s", err, tail(outb))
	}
	slog.Info("fill done", "secs", time.Since(start).Seconds())
	if !read {
		return nil
	}
	start = time.Now()
	rd := t.command(ctx, "consumer-perf-test", "--bootstrap-server", t.bootstrap, "--topic", "catch-up",
		"--group", "tail-read", "--num-records", n, "--timeout", "30000")
	if outb, err := rd.CombinedOutput(); err != nil {
		return fmt.Errorf("read: %w: %s", err, tail(outb))
	}
	slog.Info("read done", "secs", time.Since(start).Seconds())
	return nil
}

// fixedRate runs producer-perf-test at c.rate with a report every c.interval,
// stamping each line as it arrives; the JVM's pid goes to the recorder.
func (t tools) fixedRate(ctx context.Context, c config, rec *recorder) ([]window, error) {
	total := int64(c.rate) * int64(c.warm+c.measure)
	args := []string{"--bootstrap-server", t.bootstrap, "--topic", "fixed-rate",
		"--num-records", strconv.FormatInt(total, 10), "--throughput", strconv.Itoa(c.rate),
		"--record-size", strconv.Itoa(recordSize), "--reporting-interval", strconv.FormatInt(c.interval.Milliseconds(), 10),
		"--warmup-records", strconv.FormatInt(int64(c.rate)*int64(c.warm), 10), "--command-property"}
	args = append(args, strings.Fields(c.props)...)
	cmd := t.command(ctx, "producer-perf-test", args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	logf, err := os.Create(filepath.Join(c.out, "perf-test.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	rec.setProducer(cmd.Process.Pid)
	var ws []window
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		now := time.Now()
		line := sc.Text()
		fmt.Fprintf(logf, "%s %s\n", stamp(now), line)
		if w, ok := perftest.ParseWindow(line); ok {
			ws = append(ws, window{at: now, records: w.Records, avgMs: w.AvgLatencyMs, maxMs: w.MaxLatencyMs})
		}
	}
	if err := cmd.Wait(); err != nil {
		return ws, fmt.Errorf("producer-perf-test: %w", err)
	}
	return ws, nil
}

func tail(b []byte) string {
	if len(b) > 1500 {
		b = b[len(b)-1500:]
	}
	return string(b)
}
