package quorum

import (
	"sync"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Transport carries Raft messages to other voters. Send must not block for
// long (it runs on the driver's loop) and may drop messages: Raft retries.
// A single voter sends nothing; the CONTROLLER listener's framed RPC and the
// in-memory MemNetwork implement it.
type Transport interface {
	Send(msgs []*raftpb.Message)
}

// Receiver takes messages for one voter (the Driver's Step).
type Receiver interface {
	Step(msg *raftpb.Message)
}

// MemNetwork is an in-memory network of voters for tests and simulations:
// links can be cut and nodes isolated. Delivery is immediate and in order
// per sender; the receiver's queue drops messages when full.
type MemNetwork struct {
	mu    sync.Mutex
	nodes map[uint64]Receiver
	cut   map[[2]uint64]bool // directed links that drop messages
}

// NewMemNetwork returns an empty network.
func NewMemNetwork() *MemNetwork {
	return &MemNetwork{nodes: map[uint64]Receiver{}, cut: map[[2]uint64]bool{}}
}

// Register attaches (or, after a restart, re-attaches) a voter's receiver.
func (n *MemNetwork) Register(id uint64, r Receiver) {
	n.mu.Lock()
	n.nodes[id] = r
	n.mu.Unlock()
}

// Unregister detaches a voter (it is down): messages to it are dropped.
func (n *MemNetwork) Unregister(id uint64) {
	n.mu.Lock()
	delete(n.nodes, id)
	n.mu.Unlock()
}

// Cut drops messages from a to b and from b to a.
func (n *MemNetwork) Cut(a, b uint64) {
	n.mu.Lock()
	n.cut[[2]uint64{a, b}], n.cut[[2]uint64{b, a}] = true, true
	n.mu.Unlock()
}

// Isolate cuts every link of id to the given peers.
func (n *MemNetwork) Isolate(id uint64, peers []uint64) {
	for _, p := range peers {
		if p != id {
			n.Cut(id, p)
		}
	}
}

// Heal restores every link.
func (n *MemNetwork) Heal() {
	n.mu.Lock()
	n.cut = map[[2]uint64]bool{}
	n.mu.Unlock()
}

// Transport returns the sending side of voter from.
func (n *MemNetwork) Transport(from uint64) Transport { return memTransport{net: n, from: from} }

type memTransport struct {
	net  *MemNetwork
	from uint64
}

// Send delivers deep copies, so the receiver never shares memory with the
// sender's Raft log.
func (t memTransport) Send(msgs []*raftpb.Message) {
	for _, m := range msgs {
		t.net.mu.Lock()
		r, ok := t.net.nodes[m.GetTo()]
		dropped := t.net.cut[[2]uint64{t.from, m.GetTo()}]
		t.net.mu.Unlock()
		if ok && !dropped {
			r.Step(proto.Clone(m).(*raftpb.Message))
		}
	}
}
