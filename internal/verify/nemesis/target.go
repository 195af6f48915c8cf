// Package nemesis injects the faults of a `sluice verify` run on a
// schedule: process faults (kill -9 and restart, SIGSTOP and SIGCONT,
// controlled shutdown and restart), network faults through the cluster's
// fault proxy (one node isolated, or a partial partition where each node
// sees a different majority), clock jumps in fault builds, and the faults
// any client can cause through the admin API (leader elections, partition
// reassignments), which are all it can do on a cluster given by --brokers.
// Every fault is a FaultStart and a FaultEnd op in the history.
package nemesis

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Kind names a fault.
type Kind string

// The fault kinds.
const (
	// Kill sends SIGKILL to a minority of nodes and restarts them.
	Kill Kind = "kill"
	// Pause stops a minority of nodes with SIGSTOP, then SIGCONT.
	Pause Kind = "pause"
	// Partition cuts a minority of nodes off every other node (clients
	// still reach them).
	Partition Kind = "partition"
	// PartialPartition cuts some links only: in a ring of the nodes each
	// node keeps its nearest neighbours, a majority, and no two nodes see
	// the same majority (with 3 nodes: one link cut).
	PartialPartition Kind = "partial-partition"
	// Terminate shuts a minority of nodes down with SIGTERM (controlled
	// shutdown) and restarts them.
	Terminate Kind = "terminate"
	// LeaderElection moves a partition's leadership to another in-sync
	// replica: a reassignment putting it first, then a preferred election.
	LeaderElection Kind = "leader-election"
	// Reassign changes a partition's replica set (a replica swapped for a
	// broker outside it, or dropped) and, after the hold, moves it back.
	Reassign Kind = "reassign"
	// ClockJump moves a minority of nodes' clocks by up to a minute either
	// way, then back (only with a -tags sluicefault build).
	ClockJump Kind = "clock-jump"
)

// Kinds is every fault kind, in a fixed order.
var Kinds = []Kind{Kill, Pause, Partition, PartialPartition, Terminate, LeaderElection, Reassign, ClockJump}

// Target is what faults are injected into: a cluster reached by its
// bootstrap servers. Process and network faults need a ProcessTarget too
// (*cluster.Cluster), clock jumps a ClockTarget.
type Target interface {
	BootstrapServers() []string
}

// ProcessTarget is a cluster whose processes and links the nemesis
// controls; node ids are those of Nodes.
type ProcessTarget interface {
	Target
	Nodes() []int32
	Kill(id int32) error
	Terminate(id int32) error
	Restart(id int32) error
	Pause(id int32) error
	Resume(id int32) error
	CutLink(a, b int32) error
	HealLink(a, b int32) error
	Isolate(id int32) error
	HealAll() error
}

// ClockTarget is a cluster whose nodes' clocks can be moved.
type ClockTarget interface {
	ClockFaults() bool
	JumpClock(id int32, offset time.Duration) error
}

// external is a cluster given by its brokers only.
type external struct {
	brokers []string
	opts    []kgo.Opt
}

func (e *external) BootstrapServers() []string { return e.brokers }

// External is a cluster the nemesis reaches only as a client (sluice
// verify --brokers): opts (TLS, SASL) are used for its admin requests.
// Only the admin-API faults work on it.
func External(brokers []string, opts ...kgo.Opt) Target {
	return &external{brokers: slices.Clone(brokers), opts: opts}
}

// Supported are the kinds t can suffer.
func Supported(t Target) []Kind {
	var out []Kind
	// Fewer than 3 nodes have no minority to take down.
	p, ok := t.(ProcessTarget)
	processes := ok && len(p.Nodes()) >= 3
	if processes {
		out = append(out, Kill, Pause, Partition, PartialPartition, Terminate)
	}
	out = append(out, LeaderElection, Reassign)
	if c, ok := t.(ClockTarget); ok && processes && c.ClockFaults() {
		out = append(out, ClockJump)
	}
	return out
}

// adminKind reports whether k needs only a client.
func adminKind(k Kind) bool { return k == LeaderElection || k == Reassign }
