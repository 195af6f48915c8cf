package quorum

import (
	"fmt"
	"slices"
	"strings"
)

// A voter whose cluster id or voter list disagrees with its peers' is
// refused at every hello; retrying cannot fix that, only an operator can.
// The transport counts each peer's refusals in a row and, once the peers
// refusing this node leave too few voters (this node and the peers that do
// not refuse it) for a majority of its voter list, reports a RefusedError
// to TCPOptions.OnRefused once, so the node can exit with it. A node that is
// right while one peer is wrong is refused by that peer only and keeps
// running.

// DefaultMaxRefusals is how many refusals in a row make a peer count as
// refusing this node: with the reconnect backoff (50 ms doubling to 2 s)
// about 11 s, long enough to ride out a peer restarting during a rolling
// change of the voter list.
const DefaultMaxRefusals = 10

// PeerRefusal is one peer's refusal of this node's hello.
type PeerRefusal struct {
	NodeID int32
	Addr   string
	// Reason is the peer's words: which of cluster id, voters, RPC version
	// or addressee it disagrees with, naming both values.
	Reason string
}

// RefusedError says the quorum's peers refuse this node.
type RefusedError struct {
	NodeID    int32
	ClusterID string
	// Voters is this node's controller.quorum.voters, as compared.
	Voters   string
	Refusals []PeerRefusal
}

func (e *RefusedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the metadata quorum refuses node %d (cluster id %q, controller.quorum.voters %q):", e.NodeID, e.ClusterID, e.Voters)
	for i, r := range e.Refusals {
		if i > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(&b, " node %d at %s refused it: %s", r.NodeID, r.Addr, r.Reason)
	}
	b.WriteString(". Fix the configuration (controller.quorum.voters, or the cluster id in meta.properties) to match the quorum's")
	return b.String()
}

// peerRefusals is the transport's count of refusals per peer (guarded by
// TCPTransport.mu).
type peerRefusals struct {
	inRow      map[int32]int
	lastReason map[int32]string
	reported   bool
}

// noteRefused counts a refusal by peer and returns the error to report
// when the refusing peers now leave no majority (once per transport).
func (t *TCPTransport) noteRefused(peer int32, reason string) *RefusedError {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := &t.refusals
	if r.inRow == nil {
		r.inRow, r.lastReason = map[int32]int{}, map[int32]string{}
	}
	r.inRow[peer]++
	r.lastReason[peer] = reason
	if r.reported || t.closed || t.opts.Dynamic {
		return nil
	}
	var refusing []int32
	for id, n := range r.inRow {
		if n >= t.opts.MaxRefusals {
			refusing = append(refusing, id)
		}
	}
	voters := len(t.opts.Voters)
	if voters-len(refusing) >= voters/2+1 {
		return nil
	}
	r.reported = true
	slices.Sort(refusing)
	e := &RefusedError{NodeID: t.opts.NodeID, ClusterID: t.opts.ClusterID, Voters: t.voters}
	for _, id := range refusing {
		e.Refusals = append(e.Refusals, PeerRefusal{NodeID: id, Addr: t.opts.Voters[id], Reason: r.lastReason[id]})
	}
	return e
}

// noteAccepted clears a peer's refusals once it accepts this node.
func (t *TCPTransport) noteAccepted(peer int32) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.refusals.inRow, peer)
}

// refused reports a refusal by peer; OnRefused runs on the peer's sender
// goroutine, outside the transport's lock.
func (t *TCPTransport) refused(peer int32, reason string) {
	if e := t.noteRefused(peer, reason); e != nil {
		t.log.Error("the metadata quorum refuses this node", "err", e)
		if t.opts.OnRefused != nil {
			t.opts.OnRefused(e)
		}
	}
}
