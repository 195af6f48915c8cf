package cluster

import (
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/sluice-io/sluice/internal/netfault"
)

// cutMode is how the proxy cuts: a blackhole, as a pulled cable, so nodes
// learn of it only through their own timeouts.
const cutMode = netfault.Blackhole

// running is node id's live process.
func (c *Cluster) running(id int32) (int, *proc, error) {
	i, err := c.index(id)
	if err != nil {
		return 0, nil, err
	}
	c.mu.Lock()
	p := c.procs[i]
	c.mu.Unlock()
	if p == nil {
		return i, nil, fmt.Errorf("node %d is down", id)
	}
	return i, p, nil
}

// take removes node id's process from the running set.
func (c *Cluster) take(id int32) (int, *proc, error) {
	i, err := c.index(id)
	if err != nil {
		return 0, nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.procs[i]
	if p == nil {
		return i, nil, fmt.Errorf("node %d is down", id)
	}
	c.procs[i] = nil
	return i, p, nil
}

// Running reports whether node id has a process (perhaps paused).
func (c *Cluster) Running(id int32) bool {
	_, p, err := c.running(id)
	return err == nil && !p.exited()
}

// Kill sends node id SIGKILL and waits until it is gone.
func (c *Cluster) Kill(id int32) error {
	i, p, err := c.take(id)
	if err != nil {
		return fmt.Errorf("kill: %w", err)
	}
	err = p.kill()
	c.owners.Set(i, 0)
	return err
}

// Terminate sends node id SIGTERM (a controlled shutdown: its leaderships
// move first) and waits for it to exit; SIGKILL after a bound.
func (c *Cluster) Terminate(id int32) error {
	i, p, err := c.take(id)
	if err != nil {
		return fmt.Errorf("terminate: %w", err)
	}
	err = p.stop(stopTimeout)
	c.owners.Set(i, 0)
	if err != nil {
		return fmt.Errorf("terminate node %d: %w", id, err)
	}
	return nil
}

// Restart starts a killed or terminated node (or one that exited on its
// own) again on its dirs and ports, and waits until it is ready.
func (c *Cluster) Restart(id int32) error {
	i, err := c.index(id)
	if err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	c.mu.Lock()
	p := c.procs[i]
	if p != nil && p.exited() {
		c.procs[i], p = nil, nil
	}
	c.mu.Unlock()
	if p != nil {
		return fmt.Errorf("restart: node %d is running", id)
	}
	if err := c.launch(i); err != nil {
		return err
	}
	return c.awaitReady(context.Background(), i)
}

// Pause stops node id with SIGSTOP: it holds its connections and sockets
// but answers nothing, as a process stalled by GC or a VM pause.
func (c *Cluster) Pause(id int32) error {
	_, p, err := c.running(id)
	if err == nil {
		err = p.signal(syscall.SIGSTOP)
	}
	if err != nil {
		return fmt.Errorf("pause node %d: %w", id, err)
	}
	return nil
}

// Resume continues a paused node with SIGCONT.
func (c *Cluster) Resume(id int32) error {
	_, p, err := c.running(id)
	if err == nil {
		err = p.signal(syscall.SIGCONT)
	}
	if err != nil {
		return fmt.Errorf("resume node %d: %w", id, err)
	}
	return nil
}

// CutLink cuts the traffic between nodes a and b, both ways (a
// blackhole); each keeps reaching the others, and clients reach both.
func (c *Cluster) CutLink(a, b int32) error {
	i, err := c.index(a)
	j, err2 := c.index(b)
	if err = errors.Join(err, err2); err != nil {
		return fmt.Errorf("cut link: %w", err)
	}
	if i == j {
		return fmt.Errorf("cut link: node %d to itself", a)
	}
	c.proxy.CutLink(i, j, cutMode)
	return nil
}

// HealLink ends the cut between a and b.
func (c *Cluster) HealLink(a, b int32) error {
	i, err := c.index(a)
	j, err2 := c.index(b)
	if err = errors.Join(err, err2); err != nil {
		return fmt.Errorf("heal link: %w", err)
	}
	c.proxy.HealLink(i, j)
	return nil
}

// Isolate cuts node id off every other node (a blackhole); clients still
// reach it directly, as a leader cut off its peers but not its producers.
func (c *Cluster) Isolate(id int32) error {
	i, err := c.index(id)
	if err != nil {
		return fmt.Errorf("isolate: %w", err)
	}
	c.proxy.Cut(i, cutMode)
	return nil
}

// HealAll ends every cut, node and link.
func (c *Cluster) HealAll() error {
	for i := range c.members {
		c.proxy.Heal(i)
		for j := i + 1; j < len(c.members); j++ {
			c.proxy.HealLink(i, j)
		}
	}
	return nil
}

// clockFileEnv names, for a -tags sluicefault build, the file whose
// content (a Go duration, "90s" or "-2m") is added to the node's clock.
const clockFileEnv = "SLUICE_FAULT_CLOCK_FILE"

// ClockFaults reports whether JumpClock works: the binary is a -tags
// sluicefault build, which reads its clock offset from a file.
func (c *Cluster) ClockFaults() bool { return c.clockOK }

// JumpClock sets node id's clock offset from real time (0 ends a jump);
// the node reads it within ~100 ms. Only fault builds read it.
func (c *Cluster) JumpClock(id int32, offset time.Duration) error {
	i, err := c.index(id)
	if err != nil {
		return fmt.Errorf("jump clock: %w", err)
	}
	if !c.clockOK {
		return fmt.Errorf("jump clock: %s is not a -tags sluicefault build", c.o.Binary)
	}
	f := c.members[i].clockFile
	if err := os.WriteFile(f+".tmp", []byte(offset.String()), 0o644); err != nil {
		return fmt.Errorf("jump clock of node %d: %w", id, err)
	}
	if err := os.Rename(f+".tmp", f); err != nil {
		return fmt.Errorf("jump clock of node %d: %w", id, err)
	}
	return nil
}

// faultBuild reports whether binary was built with -tags sluicefault.
func faultBuild(binary string) bool {
	info, err := buildinfo.ReadFile(binary)
	if err != nil {
		return false
	}
	for _, s := range info.Settings {
		if s.Key == "-tags" && slices.Contains(strings.Split(s.Value, ","), "sluicefault") {
			return true
		}
	}
	return false
}
