package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// node is one combined broker+controller `sluice server` process. Its ports,
// data dir and server.properties stay the same across the upgrade; only the
// binary it runs changes.
type node struct {
	id          int32
	dir         string // holds server.properties, data/ and server.log
	brokerPort  int
	ctrlPort    int
	metricsPort int

	bin  string // the binary of the running process
	cmd  *exec.Cmd
	done chan struct{} // closed once cmd has been waited for
	log  *os.File
}

func (n *node) broker() string  { return "127.0.0.1:" + strconv.Itoa(n.brokerPort) }
func (n *node) ctrl() string    { return "127.0.0.1:" + strconv.Itoa(n.ctrlPort) }
func (n *node) metrics() string { return "127.0.0.1:" + strconv.Itoa(n.metricsPort) }
func (n *node) config() string  { return filepath.Join(n.dir, "server.properties") }

// writeConfig writes the node's server.properties: Kafka's three-combined-
// nodes shape from docs/operations.md, with the metrics listener for /readyz.
func (n *node) writeConfig(voters string) error {
	if err := os.MkdirAll(n.dir, 0o755); err != nil {
		return fmt.Errorf("node %d: %w", n.id, err)
	}
	props := strings.Join([]string{
		"process.roles=broker,controller",
		"node.id=" + strconv.Itoa(int(n.id)),
		"controller.quorum.voters=" + voters,
		"listeners=PLAINTEXT://" + n.broker() + ",CONTROLLER://" + n.ctrl(),
		"advertised.listeners=PLAINTEXT://" + n.broker(),
		"controller.listener.names=CONTROLLER",
		"log.dirs=" + filepath.Join(n.dir, "data"),
		"default.replication.factor=3",
		"min.insync.replicas=2",
		"sluice.metrics.listener=" + n.metrics(),
		// Metadata snapshots every second (with something applied), so
		// the new binary starts from a snapshot the old one wrote.
		"metadata.log.max.snapshot.interval.ms=1000",
	}, "\n") + "\n"
	if err := os.WriteFile(n.config(), []byte(props), 0o644); err != nil {
		return fmt.Errorf("node %d: %w", n.id, err)
	}
	return nil
}

// format runs `sluice storage format` on the node's config.
func (n *node) format(bin, clusterID string) error {
	out, err := exec.Command(bin, "storage", "format", "--cluster-id", clusterID, "--config", n.config()).CombinedOutput()
	if err != nil {
		return fmt.Errorf("node %d: storage format: %w\n%s", n.id, err, out)
	}
	return nil
}

// launch starts bin on the node's config; waitReady then waits for it.
// Output of every run is appended to one server.log.
func (n *node) launch(bin string) error {
	if n.cmd != nil {
		return fmt.Errorf("node %d already running", n.id)
	}
	logFile, err := os.OpenFile(filepath.Join(n.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("node %d: server log: %w", n.id, err)
	}
	fmt.Fprintf(logFile, "==== upgrade test: starting %s at %s\n", bin, time.Now().UTC().Format(time.RFC3339Nano))
	cmd := exec.Command(bin, "server", "--config", n.config())
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// The servers must not outlive this program, however it ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("node %d: start %s: %w", n.id, bin, err)
	}
	n.bin, n.cmd, n.log, n.done = bin, cmd, logFile, make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) {
		_ = cmd.Wait()
		close(done)
	}(cmd, n.done)
	return nil
}

// waitReady polls /readyz until it answers 200, or fails when the process
// exits or ctx ends first.
func (n *node) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	last := "no answer"
	for {
		select {
		case <-n.done:
			return fmt.Errorf("node %d exited during start-up (%s); see %s", n.id, n.cmd.ProcessState, filepath.Join(n.dir, "server.log"))
		case <-ctx.Done():
			return fmt.Errorf("node %d not ready at http://%s/readyz: %s", n.id, n.metrics(), last)
		case <-time.After(100 * time.Millisecond):
		}
		status, body, err := httpGet(ctx, "http://"+n.metrics()+"/readyz")
		switch {
		case err != nil:
			last = err.Error()
		case status == http.StatusOK:
			return nil
		default:
			last = fmt.Sprintf("%d %s", status, strings.TrimSpace(body))
		}
	}
}

// stop sends SIGTERM and waits for a clean exit (status 0).
func (n *node) stop(grace time.Duration) error {
	if n.cmd == nil {
		return nil
	}
	if err := n.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("node %d: SIGTERM: %w", n.id, err)
	}
	select {
	case <-n.done:
	case <-time.After(grace):
		n.kill()
		return fmt.Errorf("node %d ignored SIGTERM for %s; killed", n.id, grace)
	}
	state := n.cmd.ProcessState
	n.release()
	if !state.Success() {
		return fmt.Errorf("node %d exited after SIGTERM with %s", n.id, state)
	}
	return nil
}

// kill ends the process at once; for clean-up after a failure.
func (n *node) kill() {
	if n.cmd == nil {
		return
	}
	_ = n.cmd.Process.Signal(syscall.SIGKILL)
	<-n.done
	n.release()
}

func (n *node) release() {
	n.log.Close()
	n.cmd, n.log, n.done = nil, nil, nil
}

// pid is the running process's id, 0 when stopped.
func (n *node) pid() int {
	if n.cmd == nil {
		return 0
	}
	return n.cmd.Process.Pid
}

func httpGet(ctx context.Context, url string) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	return resp.StatusCode, string(body), err
}

// metadataSnapshots lists the metadata snapshot files in the node's
// __cluster_metadata-0 directory.
func (n *node) metadataSnapshots() ([]string, error) {
	files, err := filepath.Glob(filepath.Join(n.dir, "data", "__cluster_metadata-0", "*.checkpoint"))
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", n.id, err)
	}
	for i, f := range files {
		files[i] = filepath.Base(f)
	}
	return files, nil
}
