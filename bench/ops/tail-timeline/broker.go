package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sluice-io/sluice/internal/freeport"
)

// broker is one fresh Sluice or Kafka process.
type broker struct {
	system    string
	pid       int
	bootstrap string
	dataDir   string
	stopFn    func()

	mu sync.Mutex
	gc []event // Sluice's gctrace lines, stamped when read
}

// event is a timestamped happening beside the latency windows.
type event struct {
	at   time.Time
	kind string
	text string
}

func startBroker(ctx context.Context, c config) (*broker, error) {
	if c.system == "sluice" {
		return startSluice(ctx, c)
	}
	return startKafka(ctx, c)
}

// jvmGCOpts makes every JVM started with it log GC and safepoint pauses with
// wall-clock stamps to its own file in dir.
func jvmGCOpts(dir string) string {
	return "-Xlog:gc,safepoint:file=" + filepath.Join(dir, "jvm-gc-%p.log") + ":time"
}

func startSluice(ctx context.Context, c config) (*broker, error) {
	ports, err := freeport.Ports(2)
	if err != nil {
		return nil, err
	}
	port, ctrl := ports[0], ports[1]
	data := filepath.Join(c.out, "data")
	cmd := exec.Command(c.sluice, "server",
		"--override", "log.dirs="+data,
		"--override", fmt.Sprintf("listeners=PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", port, ctrl),
		"--override", fmt.Sprintf("controller.quorum.voters=1@127.0.0.1:%d", ctrl),
		"--override", "group.initial.rebalance.delay.ms=0")
	cmd.Env = append(os.Environ(), "GODEBUG=gctrace=1")
	logf, err := os.Create(filepath.Join(c.out, "broker.log"))
	if err != nil {
		return nil, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start sluice: %w", err)
	}
	pw.Close()
	b := &broker{system: "sluice", pid: cmd.Process.Pid, bootstrap: fmt.Sprintf("127.0.0.1:%d", port), dataDir: data}
	go b.readLog(pr, logf)
	b.stopFn = func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		waitDone := make(chan struct{})
		go func() { _ = cmd.Wait(); close(waitDone) }()
		select {
		case <-waitDone:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-waitDone
		}
		_ = os.RemoveAll(data)
	}
	if err := waitPort(ctx, b.bootstrap); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

// readLog stamps every line of Sluice's output; gctrace lines become events.
func (b *broker) readLog(r *os.File, w *os.File) {
	defer w.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		now := time.Now()
		line := sc.Text()
		fmt.Fprintf(w, "%s %s\n", stamp(now), line)
		if strings.HasPrefix(line, "gc ") {
			b.mu.Lock()
			b.gc = append(b.gc, event{at: now, kind: "go-gc", text: gcSummary(line)})
			b.mu.Unlock()
		}
	}
}

// gcSummary keeps the cycle number and the wall-clock phases
// ("gc 12 @3.4s 1%: 0.02+1.2+0.01 ms clock": the first and last are stop-the-world).
func gcSummary(line string) string {
	f := strings.Fields(line)
	if len(f) >= 5 {
		return f[0] + f[1] + " " + f[4] + "ms"
	}
	return line
}

func (b *broker) gcEvents() []event {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]event(nil), b.gc...)
}

func startKafka(ctx context.Context, c config) (*broker, error) {
	state := filepath.Join(c.out, "kafka-ref-state")
	env := append(os.Environ(), "KAFKA_REF_STATE="+state, "JAVA_TOOL_OPTIONS="+jvmGCOpts(c.out))
	cmd := exec.CommandContext(ctx, c.kafkaRef, "start")
	cmd.Env = env
	cmd.Stderr = os.Stderr
	outb, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kafka-ref start: %w", err)
	}
	lines := strings.Fields(strings.TrimSpace(string(outb)))
	bootstrap := lines[len(lines)-1]
	pids, err := os.ReadFile(filepath.Join(state, "pids"))
	if err != nil {
		return nil, err
	}
	pid := int(atoi(strings.Fields(string(pids))[0]))
	run, err := os.ReadFile(filepath.Join(state, "rundir"))
	data := ""
	if err == nil {
		data = filepath.Join(strings.TrimSpace(string(run)), "node1", "data")
	}
	b := &broker{system: "kafka", pid: pid, bootstrap: bootstrap, dataDir: data}
	b.stopFn = func() {
		stop := exec.Command(c.kafkaRef, "stop")
		stop.Env = env
		_ = stop.Run()
	}
	return b, nil
}

func (b *broker) close() {
	if b.stopFn != nil {
		b.stopFn()
		b.stopFn = nil
	}
}

func waitPort(ctx context.Context, addr string) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s: no listener after 60s", addr)
}
