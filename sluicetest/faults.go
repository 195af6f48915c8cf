package sluicetest

import (
	"errors"
	"syscall"

	"github.com/sluice-io/sluice/internal/netfault"
	"github.com/sluice-io/sluice/internal/vfs"
)

// StopNode stops node id cleanly, as `kill -TERM` would: a controlled
// shutdown moves its leaderships away, then its logs are flushed.
func (c *Cluster) StopNode(id int32) error {
	m, err := c.node(id)
	if err != nil {
		return err
	}
	return m.stop(false)
}

// KillNode stops node id abruptly, as `kill -9` would: no controlled
// shutdown (the controller fences it when its session times out), no
// flush, no clean-shutdown marker, so its restart recovers its logs. On
// disk what it wrote stays (the page cache survives a killed process);
// with InMemory the node's file system loses every write not yet synced,
// as a power loss would.
func (c *Cluster) KillNode(id int32) error {
	m, err := c.node(id)
	if err != nil {
		return err
	}
	return m.stop(true)
}

// RestartNode starts a stopped or killed node id again, on its ports and
// with its data, and waits until it serves clients.
func (c *Cluster) RestartNode(id int32) error {
	m, err := c.node(id)
	if err != nil {
		return err
	}
	return m.start()
}

// CutLink cuts the network between nodes a and b, both ways, until
// HealLink: their connections are closed and new ones refused. Each keeps
// talking to the other nodes, and clients still reach both.
func (c *Cluster) CutLink(a, b int32) error {
	if err := c.checkIDs(a, b); err != nil {
		return err
	}
	c.net.proxy.CutLink(int(a), int(b), netfault.Refuse)
	return nil
}

// HealLink ends CutLink(a, b).
func (c *Cluster) HealLink(a, b int32) error {
	if err := c.checkIDs(a, b); err != nil {
		return err
	}
	c.net.proxy.HealLink(int(a), int(b))
	return nil
}

// Isolate cuts node id off every other node until Rejoin; clients still
// reach it.
func (c *Cluster) Isolate(id int32) error {
	if err := c.checkIDs(id); err != nil {
		return err
	}
	c.net.proxy.Cut(int(id), netfault.Refuse)
	return nil
}

// Rejoin ends Isolate(id).
func (c *Cluster) Rejoin(id int32) error {
	if err := c.checkIDs(id); err != nil {
		return err
	}
	c.net.proxy.Heal(int(id))
	return nil
}

// DiskFault decides the error of one file operation of a node: op is one
// of create, openrw, open, remove, removeall, rename, mkdirall, list, stat,
// syncdir, read, write, sync, truncate, size, close; path is the file's.
// nil lets the operation run.
type DiskFault func(op, path string) error

// FailDisk makes node id's file operations fail as fault decides, until
// HealDisk; the node carries on running (a log dir whose writes fail goes
// offline, as in Kafka). The node must be running.
func (c *Cluster) FailDisk(id int32, fault DiskFault) error {
	m, err := c.node(id)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.fs == nil {
		return errors.New("sluicetest: FailDisk: node is not running")
	}
	m.mu.fs.SetInjector(vfs.InjectorFunc(func(op vfs.Op, path string, _ int) error {
		return fault(op.String(), path)
	}))
	return nil
}

// HealDisk ends FailDisk(id).
func (c *Cluster) HealDisk(id int32) error {
	m, err := c.node(id)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.fs != nil {
		m.mu.fs.SetInjector(nil)
	}
	return nil
}

// FailOps is a DiskFault failing the named operations (every one when none
// is named) with EIO, as a dying disk does.
func FailOps(ops ...string) DiskFault {
	return func(op, _ string) error {
		if len(ops) == 0 {
			return syscall.EIO
		}
		for _, o := range ops {
			if o == op {
				return syscall.EIO
			}
		}
		return nil
	}
}

func (c *Cluster) checkIDs(ids ...int32) error {
	for _, id := range ids {
		if _, err := c.node(id); err != nil {
			return err
		}
	}
	return nil
}

// Running reports whether node id runs: false once stopped or killed, and
// once it halted itself, as a Kafka broker halts when its log dirs fail.
func (c *Cluster) Running(id int32) bool {
	m, err := c.node(id)
	return err == nil && m.running() != nil
}
