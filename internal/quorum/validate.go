package quorum

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"go.etcd.io/raft/v3/raftpb"
)

// ErrInvalidMessage wraps every refusal of a malformed peer message.
var ErrInvalidMessage = errors.New("quorum: invalid raft message")

// remoteTypes are the message types one voter sends another. Local types
// (MsgHup, MsgBeat, storage messages...) and proposals or read-index
// requests (this quorum neither forwards proposals nor serves read index)
// are refused.
var remoteTypes = [...]raftpb.MessageType{
	raftpb.MsgApp, raftpb.MsgAppResp, raftpb.MsgVote, raftpb.MsgVoteResp,
	raftpb.MsgSnap, raftpb.MsgHeartbeat, raftpb.MsgHeartbeatResp,
	raftpb.MsgTransferLeader, raftpb.MsgTimeoutNow, raftpb.MsgPreVote, raftpb.MsgPreVoteResp,
}

// validate checks what Raft assumes of a message from a peer: it comes from
// a voter, is addressed here and carries a term; its entries are
// contiguous after Index with terms that never fall and never pass the
// message's, and agree with our committed entries; a heartbeat's commit is within the log the leader knows we
// hold; a snapshot is present, within the term and of our voter set.
// Raft panics on some of these (a commit beyond the last index, an append
// conflicting with committed entries), so a peer's bad bytes must stop here.
func (v *Voter) validate(m *raftpb.Message) error {
	if m == nil {
		return fmt.Errorf("%w: nil", ErrInvalidMessage)
	}
	if !slices.Contains(remoteTypes[:], m.GetType()) {
		return fmt.Errorf("%w: type %s is not sent between voters", ErrInvalidMessage, m.GetType())
	}
	if m.GetTo() != RaftID(v.opts.NodeID) {
		return fmt.Errorf("%w: addressed to %d, this voter is %d", ErrInvalidMessage, NodeID(m.GetTo()), v.opts.NodeID)
	}
	if m.GetFrom() == m.GetTo() || !v.knownPeer(m.GetFrom()) {
		return fmt.Errorf("%w: from %d, not another voter", ErrInvalidMessage, NodeID(m.GetFrom()))
	}
	if m.GetTerm() == 0 {
		return fmt.Errorf("%w: %s without a term", ErrInvalidMessage, m.GetType())
	}
	// Terms are Kafka leader epochs (int32) in the log; a larger one could
	// not be stored, and one near 2^64 overflows Raft's term arithmetic.
	if m.GetTerm() > math.MaxInt32 {
		return fmt.Errorf("%w: term %d above the largest epoch", ErrInvalidMessage, m.GetTerm())
	}
	if m.GetLogTerm() > m.GetTerm() && m.GetType() != raftpb.MsgVote && m.GetType() != raftpb.MsgPreVote {
		return fmt.Errorf("%w: log term %d above term %d", ErrInvalidMessage, m.GetLogTerm(), m.GetTerm())
	}
	prevTerm := m.GetLogTerm()
	for i, e := range m.GetEntries() {
		if e == nil || e.GetIndex() != m.GetIndex()+uint64(i)+1 {
			return fmt.Errorf("%w: entry %d of %d is not at index %d", ErrInvalidMessage, i, len(m.GetEntries()), m.GetIndex()+uint64(i)+1)
		}
		if e.GetTerm() < prevTerm || e.GetTerm() > m.GetTerm() {
			return fmt.Errorf("%w: entry %d has term %d after %d in a term %d message", ErrInvalidMessage, e.GetIndex(), e.GetTerm(), prevTerm, m.GetTerm())
		}
		prevTerm = e.GetTerm()
	}
	switch m.GetType() {
	case raftpb.MsgApp:
		// A leader's entries agree with what we committed; Raft panics on
		// a conflict there, so a disagreeing message is refused first.
		committed := v.committed()
		for _, e := range m.GetEntries() {
			if e.GetIndex() > committed {
				break
			}
			if term, err := v.storage.Term(e.GetIndex()); err == nil && term != e.GetTerm() {
				return fmt.Errorf("%w: entry %d of term %d conflicts with our committed entry of term %d", ErrInvalidMessage, e.GetIndex(), e.GetTerm(), term)
			}
		}
	case raftpb.MsgHeartbeat:
		// The leader sends min(our match, its commit): never beyond our log.
		if m.GetCommit() > v.storage.lastIndex() {
			return fmt.Errorf("%w: heartbeat commit %d beyond our last index %d", ErrInvalidMessage, m.GetCommit(), v.storage.lastIndex())
		}
	case raftpb.MsgSnap:
		if v.opts.Snapshots == nil {
			return fmt.Errorf("%w: snapshot sent to a voter without snapshots", ErrInvalidMessage)
		}
		snap := m.GetSnapshot()
		if snap == nil || snap.GetMetadata() == nil || snap.GetMetadata().GetIndex() == 0 {
			return fmt.Errorf("%w: snapshot message without a snapshot", ErrInvalidMessage)
		}
		if snap.GetMetadata().GetTerm() > m.GetTerm() {
			return fmt.Errorf("%w: snapshot term %d above message term %d", ErrInvalidMessage, snap.GetMetadata().GetTerm(), m.GetTerm())
		}
		if err := v.checkConf(snap); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidMessage, err)
		}
	}
	return nil
}

// knownPeer: a static quorum hears only its voters; a dynamic one also its
// learners, and a controller that is not (yet) a member hears whoever leads
// (it is being added, or replays the log that will tell it the voters).
func (v *Voter) knownPeer(id uint64) bool {
	conf := v.storage.conf
	if slices.Contains(conf.GetVoters(), id) {
		return true
	}
	if !v.opts.Dynamic {
		return false
	}
	self := RaftID(v.opts.NodeID)
	if slices.Contains(conf.GetLearners(), id) {
		return true
	}
	return !slices.Contains(conf.GetVoters(), self) && !slices.Contains(conf.GetLearners(), self)
}

func (v *Voter) committed() uint64 { return v.rn.BasicStatus().GetCommit() }
