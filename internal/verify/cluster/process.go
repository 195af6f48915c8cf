package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"
)

// proc is one started node process.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once Wait returned
	err  error         // Wait's result, set before done closes
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// signal sends sig unless the process already exited.
func (p *proc) signal(sig syscall.Signal) error {
	if p.exited() {
		return fmt.Errorf("already exited: %v", p.err)
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("%v: %w", sig, err)
	}
	return nil
}

// kill sends SIGKILL and waits until the process is gone.
func (p *proc) kill() error {
	if !p.exited() {
		_ = p.cmd.Process.Kill()
	}
	<-p.done
	return nil
}

// stop sends SIGTERM (after SIGCONT, so a paused node can handle it) and
// waits up to grace for the exit, then kills it.
func (p *proc) stop(grace time.Duration) error {
	if p.exited() {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		var exit *exec.ExitError
		if errors.As(p.err, &exit) {
			return fmt.Errorf("exited after SIGTERM: %w", p.err)
		}
		return nil
	case <-time.After(grace):
		_ = p.kill()
		return fmt.Errorf("still running %s after SIGTERM: killed", grace)
	}
}

// launch starts node i with its output appended to its log file.
func (c *Cluster) launch(i int) error {
	m := c.members[i]
	props := properties(c.members, i, c.o.Overrides)
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	args := []string{"server"}
	for _, k := range keys {
		args = append(args, "--override", k+"="+props[k])
	}
	logFile, err := os.OpenFile(m.logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("node %d's log: %w", m.id, err)
	}
	// The child holds its own descriptor; ours is not needed after Start.
	defer logFile.Close()
	cmd := exec.Command(c.o.Binary, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(slices.Clip(os.Environ()), c.o.Env...)
	cmd.Env = append(cmd.Env, clockFileEnv+"="+m.clockFile)
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start node %d: %w", m.id, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	c.owners.Set(i, cmd.Process.Pid)
	c.mu.Lock()
	c.procs[i] = p
	c.mu.Unlock()
	c.log.Debug("node started", "node", m.id, "pid", cmd.Process.Pid, "log", m.logFile)
	return nil
}

// awaitReady polls node i's /readyz until it answers 200; it fails when
// the process exits, ctx ends or readyTimeout passes.
func (c *Cluster) awaitReady(ctx context.Context, i int) error {
	m := c.members[i]
	c.mu.Lock()
	p := c.procs[i]
	c.mu.Unlock()
	if p == nil {
		return fmt.Errorf("node %d is not running", m.id)
	}
	httpc := &http.Client{Timeout: time.Second}
	deadline := time.NewTimer(readyTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	why := ""
	for {
		ok, status := probe(ctx, httpc, "http://"+m.metrics+"/readyz")
		if ok {
			return nil
		}
		why = status
		select {
		case <-p.done:
			return fmt.Errorf("node %d exited while starting: %v (log %s)", m.id, p.err, m.logFile)
		case <-ctx.Done():
			return fmt.Errorf("node %d not ready: %w", m.id, ctx.Err())
		case <-deadline.C:
			return fmt.Errorf("node %d not ready after %s: %s (log %s)", m.id, readyTimeout, why, m.logFile)
		case <-tick.C:
		}
	}
}

// probe asks url; not ready comes with the reason the node gave.
func probe(ctx context.Context, httpc *http.Client, url string) (bool, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err.Error()
	}
	resp, err := httpc.Do(req)
	if err != nil {
		return false, err.Error()
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK, strings.TrimSpace(string(body))
}
