package testbin

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Process is one running child process whose output is collected. It is
// killed at the end of the test that started it if still running.
type Process struct {
	cmd     *exec.Cmd
	logs    *SyncBuffer
	done    chan struct{} // closed once Wait returned
	waitErr error         // Wait's result, set before done is closed
}

// StartProcess runs binary with args. Its stdout and stderr go to Logs.
// At the end of the test it is killed if still running, and its output
// is logged under name if the test failed.
func StartProcess(tb testing.TB, name, binary string, args ...string) *Process {
	tb.Helper()
	p := &Process{cmd: exec.Command(binary, args...), logs: &SyncBuffer{}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.done)
	}()
	tb.Cleanup(func() {
		if exited, _ := p.Exited(); !exited {
			p.Kill()
		}
		if tb.Failed() {
			tb.Logf("%s log:\n%s", name, p.Logs())
		}
	})
	return p
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Logs is the process's output so far.
func (p *Process) Logs() string { return p.logs.String() }

// Exited reports whether the process has ended and, if so, how.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.waitErr
	default:
		return false, nil
	}
}

// Done is closed when the process has ended.
func (p *Process) Done() <-chan struct{} { return p.done }

// Stop sends SIGTERM and waits up to grace for the process to exit; past
// grace it is killed. The error says why the exit was not clean: a non-zero
// exit, or the grace ran out.
func (p *Process) Stop(grace time.Duration) error {
	if exited, err := p.Exited(); exited {
		return err
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("SIGTERM: %w", err)
	}
	select {
	case <-p.done:
		if p.waitErr != nil {
			return fmt.Errorf("exit after SIGTERM: %w", p.waitErr)
		}
		return nil
	case <-time.After(grace):
		p.Kill()
		return fmt.Errorf("still running %s after SIGTERM; killed", grace)
	}
}

// Kill sends SIGKILL and waits until the process is gone.
func (p *Process) Kill() error {
	if exited, _ := p.Exited(); exited {
		return nil
	}
	err := p.cmd.Process.Kill()
	<-p.done
	// Wait may have reaped the process between the check and the signal.
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}

// SyncBuffer collects output that one goroutine (or a child process)
// writes while the test reads it.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String is everything written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Memory is a process's resident memory as /proc reports it, in bytes:
// now (VmRSS) and at its peak (VmHWM).
type Memory struct {
	RSS, Peak int64
}

// Memory reads the process's resident memory from /proc/<pid>/status.
func (p *Process) Memory() (Memory, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Pid()))
	if err != nil {
		return Memory{}, err
	}
	var m Memory
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 3 || fields[2] != "kB" {
			continue
		}
		kb, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			continue
		}
		switch fields[0] {
		case "VmRSS:":
			m.RSS = kb << 10
		case "VmHWM:":
			m.Peak = kb << 10
		}
	}
	return m, nil
}
