package quorum

import (
	"sync"
	"time"

	"go.etcd.io/raft/v3"
)

// Kafka's raft-metrics current-state values (KafkaRaftMetrics), as the
// metric naming contract lists them. Kafka 4.4 names "voted"
// "unattached-voted" and has "prospective" and "prospective-voted" for a
// pre-vote candidate (KIP-996), which the contract does not list: a
// pre-candidate reports "voted" or "unattached" as Kafka's voters did
// before pre-vote.
const (
	StateLeader     = "leader"
	StateCandidate  = "candidate"
	StateVoted      = "voted"
	StateFollower   = "follower"
	StateUnattached = "unattached"
	StateObserver   = "observer"
)

// raftStateName maps etcd raft's role, known leader and vote onto Kafka's
// state names.
func raftStateName(st raft.BasicStatus) string {
	switch {
	case st.RaftState == raft.StateLeader:
		return StateLeader
	case st.RaftState == raft.StateCandidate:
		return StateCandidate
	case st.Lead != raft.None:
		return StateFollower
	case st.GetVote() != raft.None:
		return StateVoted
	}
	return StateUnattached
}

// observerState is an observer's state: Kafka's observer follows a known
// leader and is unattached while it knows none.
func observerState(leader int32) string {
	if leader < 0 {
		return StateUnattached
	}
	return StateObserver
}

// raftVote is Kafka's current-vote: this node as leader or candidate, the
// node it voted for while no leader is known, else -1.
func raftVote(nodeID int32, st raft.BasicStatus) int32 {
	switch name := raftStateName(st); name {
	case StateLeader, StateCandidate:
		return nodeID
	case StateVoted:
		return NodeID(st.GetVote())
	}
	return -1
}

// RaftLatencies are a voter's commit and election latencies, in Kafka's
// raft-metrics windows: recorded on the voter's loop, read when scraped.
type RaftLatencies struct {
	mu       sync.Mutex
	commit   windowedStat
	election windowedStat
	// electionStart is when this voter last began to stand (zero: no
	// election pending).
	electionStart time.Time
}

// LatencyStats are the averages and maxima in milliseconds (NaN: nothing
// recorded in the window).
type LatencyStats struct {
	CommitAvg, CommitMax     float64
	ElectionAvg, ElectionMax float64
}

// recordCommit records a proposal's time from Propose to commit, which
// Kafka measures from the leader's append to the high watermark.
func (l *RaftLatencies) recordCommit(d time.Duration, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.commit.record(millisOf(d), now)
}

// roleChanged follows the elections as Kafka's KafkaRaftClient does: one
// starts when the voter stands (pre-vote included) and ends once it leads
// or follows a known leader.
func (l *RaftLatencies) roleChanged(st raft.SoftState, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case st.RaftState == raft.StatePreCandidate || st.RaftState == raft.StateCandidate:
		if l.electionStart.IsZero() {
			l.electionStart = now
		}
	case st.RaftState == raft.StateLeader || st.Lead != raft.None:
		if !l.electionStart.IsZero() {
			l.election.record(millisOf(now.Sub(l.electionStart)), now)
			l.electionStart = time.Time{}
		}
	}
}

// Measure returns the latencies of the window at now.
func (l *RaftLatencies) Measure(now time.Time) LatencyStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	var s LatencyStats
	s.CommitAvg, s.CommitMax = l.commit.measure(now)
	s.ElectionAvg, s.ElectionMax = l.election.measure(now)
	return s
}

func millisOf(d time.Duration) float64 { return float64(max(d, 0)) / float64(time.Millisecond) }
