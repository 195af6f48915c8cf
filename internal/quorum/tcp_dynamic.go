package quorum

import (
	"fmt"
	"strings"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/sluice-io/sluice/internal/kafka"
)

// A dynamic quorum's hello keeps the wire format of the static one: its
// voters field is "dynamic:" and the directory id the sender expects the
// receiver to have, then "|", the sender's directory id, "|" and its
// CONTROLLER address (so a joining node can answer a leader it does not
// know yet). A node whose metadata directory was replaced (a new
// directory id) so refuses the raft messages meant for the voter it used
// to be, as Kafka takes such a node for an observer, until the operator
// removes the old voter and adds the new one.
const dynamicHelloPrefix = "dynamic:"

func (t *TCPTransport) helloVoters(peerDir kafka.UUID) string {
	if !t.opts.Dynamic {
		return t.voters
	}
	return dynamicHelloPrefix + peerDir.String() + "|" + t.opts.DirectoryID.String() + "|" + t.opts.Advertised
}

// learnPeer gives a sender to a node that said hello and is not a peer yet
// (this node does not know the membership that names it, or is joining).
// The next SetMembers keeps it only if the membership names it.
func (t *TCPTransport) learnPeer(h hello) {
	_, rest, _ := strings.Cut(h.voters, "|")
	dirText, addr, ok := strings.Cut(rest, "|")
	dir, err := kafka.ParseUUID(dirText)
	if !ok || err != nil || addr == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, known := t.peers[RaftID(h.from)]; known || t.closed {
		return
	}
	p := t.newPeer(h.from, addr, dir)
	t.peers[RaftID(h.from)] = p
	if t.started {
		t.wg.Add(1)
		go p.run()
	}
	t.log.Info("raft peer learned from its hello", "peer", h.from, "addr", addr)
}

// dynamicRefusal says why a dynamic quorum's hello is refused ("" when
// accepted); version, cluster id and addressee were checked already. Any
// node may send: one that is not a voter here is refused message by
// message by the Voter (a joining controller hears from a leader it does
// not know yet).
func (t *TCPTransport) dynamicRefusal(h hello) string {
	rest, ok := strings.CutPrefix(h.voters, dynamicHelloPrefix)
	dir, _, _ := strings.Cut(rest, "|")
	if !ok {
		return fmt.Sprintf("node %d uses controller.quorum.voters %q (a static quorum), node %d is in a dynamic quorum (controller.quorum.bootstrap.servers)", h.from, h.voters, t.opts.NodeID)
	}
	if h.from == t.opts.NodeID {
		return fmt.Sprintf("node %d is not another node", h.from)
	}
	want := t.opts.DirectoryID.String()
	if dir != (kafka.UUID{}).String() && dir != want {
		return fmt.Sprintf("node %d addresses node %d with directory id %s, but this node's metadata directory id is %s: a replaced voter must be removed (remove-controller) and added again (add-controller)", h.from, t.opts.NodeID, dir, want)
	}
	return ""
}

func (t *TCPTransport) newPeer(id int32, addr string, dir kafka.UUID) *peerSender {
	return &peerSender{t: t, id: id, addr: addr, dir: dir, queue: make(chan *raftpb.Message, t.opts.QueueSize), stop: make(chan struct{})}
}

// SetMembers makes the dynamic quorum's members (but this node) the
// transport's peers: new ones get a sender, departed ones' senders stop,
// and a member whose address or directory id changed gets a new one.
func (t *TCPTransport) SetMembers(ms Membership, listener string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	want := map[uint64]Member{}
	for _, m := range ms.Members {
		if m.ID != t.opts.NodeID {
			want[RaftID(m.ID)] = m
		}
	}
	for rid, p := range t.peers {
		m, ok := want[rid]
		if e, has := m.Endpoint(listener); ok && has && e.Addr() == p.addr && m.DirectoryID == p.dir {
			delete(want, rid)
			continue
		}
		close(p.stop)
		delete(t.peers, rid)
	}
	for rid, m := range want {
		e, ok := m.Endpoint(listener)
		if !ok {
			t.log.Warn("quorum member has no endpoint on the controller listener", "member", m.Key(), "listener", listener)
			continue
		}
		p := t.newPeer(m.ID, e.Addr(), m.DirectoryID)
		t.peers[rid] = p
		if t.started {
			t.wg.Add(1)
			go p.run()
		}
	}
}
