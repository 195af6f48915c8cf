package quorum

import (
	"errors"
	"fmt"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-io/sluice/internal/kafka"
)

// Errors of membership changes (KIP-853). Each is returned wrapped with
// Kafka's message; the API layer maps them to Kafka's error codes.
var (
	// ErrStaticQuorum: kraft.version is 0 (controller.quorum.voters), so
	// the voter set cannot change (UNSUPPORTED_VERSION).
	ErrStaticQuorum = errors.New("quorum: the voter set is static")
	// ErrChangePending: an earlier change is not committed yet, or the
	// leader has not committed its epoch (REQUEST_TIMED_OUT).
	ErrChangePending = errors.New("quorum: a voter change is pending")
	// ErrDuplicateVoter: the id is already a voter (DUPLICATE_VOTER).
	ErrDuplicateVoter = errors.New("quorum: duplicate voter")
	// ErrVoterNotFound: no voter has that id and directory id
	// (VOTER_NOT_FOUND).
	ErrVoterNotFound = errors.New("quorum: voter not found")
	// ErrChangeTimedOut: the new voter did not catch up in time, or the
	// change did not commit in time (REQUEST_TIMED_OUT).
	ErrChangeTimedOut = errors.New("quorum: voter change timed out")
)

// changeStage is where a membership change stands.
type changeStage int

const (
	// stageLearner: the new voter's AddLearner is proposed.
	stageLearner changeStage = iota
	// stageCatchUp: it is a learner; waiting for it to reach target.
	stageCatchUp
	// stageCommit: the final change (promotion, removal, update) is
	// proposed; the request completes when it applies.
	stageCommit
)

// memberChange is the one membership change a leader runs at a time.
// Invariant: index is the index of the conf change awaited (0 while none
// is proposed); target is set in stageCatchUp.
type memberChange struct {
	member   Member
	stage    changeStage
	index    uint64
	target   uint64
	deadline time.Time
	done     func(error)
}

// Membership returns the dynamic quorum's applied membership (empty for a
// static quorum).
func (v *Voter) Membership() Membership {
	return Membership{Members: append([]Member(nil), v.members.Members...)}
}

// checkChangeAllowed runs the checks every change starts with, in Kafka's
// order (AddVoterHandler, RemoveVoterHandler).
func (v *Voter) checkChangeAllowed(op string) error {
	if v.stopped != nil {
		return fmt.Errorf("%w: %w", ErrStopped, v.stopped)
	}
	st := v.rn.BasicStatus()
	if st.RaftState != raft.StateLeader {
		return NotLeaderError{Leader: NodeID(st.Lead)}
	}
	if v.change != nil {
		return fmt.Errorf("%w: Request timed out waiting for leader to handle previous add or remove voter request", ErrChangePending)
	}
	if term, err := v.storage.Term(v.applied); err != nil || term != st.GetTerm() {
		return fmt.Errorf("%w: Request timed out waiting for leader to establish HWM and fence previous voter changes", ErrChangePending)
	}
	if !v.opts.Dynamic {
		return fmt.Errorf("%w: Cluster doesn't support %s voter because the kraft.version feature is 0", ErrStaticQuorum, op)
	}
	if v.confIndex > v.applied {
		return fmt.Errorf("%w: Request timed out waiting for voters to commit the latest voter change at Optional[%d] with HWM %d", ErrChangePending, v.confIndex-1, st.GetCommit())
	}
	return nil
}

// AddVoter adds m as a voter: first as a Raft learner that receives the
// log, then, once it has caught up with the leader's log end (Kafka adds
// only a caught-up observer), promoted to voter. done gets nil once the
// promotion is applied, or an error; a learner that does not catch up
// before timeout is removed again (the change rolls back).
func (v *Voter) AddVoter(m Member, timeout time.Duration, done func(error)) {
	if err := v.checkChangeAllowed("adding"); err != nil {
		done(err)
		return
	}
	if cur, ok := v.members.Find(m.ID); ok && !cur.Learner {
		done(fmt.Errorf("%w: The voter id for %s is already part of the set of voters %s.", ErrDuplicateVoter, m.Key(), v.members.VoterKeys()))
		return
	}
	m.Learner = true
	c := &memberChange{member: m, deadline: v.opts.Clock.Now().Add(timeout), done: done}
	if err := v.proposeConf(c, v.members.with(m), raftpb.ConfChangeAddLearnerNode); err != nil {
		done(err)
		return
	}
	v.change = c
}

// RemoveVoter removes the voter (id, dir). done gets nil once the removal
// is applied. A leader that removes itself steps down then.
func (v *Voter) RemoveVoter(id int32, dir kafka.UUID, done func(error)) {
	if err := v.checkChangeAllowed("removing"); err != nil {
		done(err)
		return
	}
	cur, ok := v.members.Find(id)
	next := v.members.without(id)
	if !ok || cur.DirectoryID != dir || (!cur.Learner && len(next.Voters()) == 0) {
		done(fmt.Errorf("%w: Cannot remove voter %s from the set of voters %s", ErrVoterNotFound, ReplicaKeyString(id, dir), v.members.VoterKeys()))
		return
	}
	c := &memberChange{member: cur, stage: stageCommit, deadline: v.opts.Clock.Now().Add(time.Hour), done: done}
	if err := v.proposeConf(c, next, raftpb.ConfChangeRemoveNode); err != nil {
		done(err)
		return
	}
	v.change = c
}

// UpdateVoter replaces the endpoints of the voter (m.ID, m.DirectoryID).
func (v *Voter) UpdateVoter(m Member, done func(error)) {
	if err := v.checkChangeAllowed("updating"); err != nil {
		done(err)
		return
	}
	cur, ok := v.members.Find(m.ID)
	if !ok || cur.DirectoryID != m.DirectoryID {
		done(fmt.Errorf("%w: Voter key %s not found in the voter set %s", ErrVoterNotFound, m.Key(), v.members.VoterKeys()))
		return
	}
	m.Learner = cur.Learner
	c := &memberChange{member: m, stage: stageCommit, deadline: v.opts.Clock.Now().Add(time.Hour), done: done}
	if err := v.proposeConf(c, v.members.with(m), raftpb.ConfChangeUpdateNode); err != nil {
		done(err)
		return
	}
	v.change = c
}

// proposeConf proposes one single-step configuration change whose Context
// is the membership after it. Ready was drained before, so the change
// takes the next index.
func (v *Voter) proposeConf(c *memberChange, next Membership, typ raftpb.ConfChangeType) error {
	index := v.storage.lastIndex() + 1
	cc := &raftpb.ConfChangeV2{
		Changes: []*raftpb.ConfChangeSingle{{Type: typ.Enum(), NodeId: proto.Uint64(RaftID(c.member.ID))}},
		Context: next.Encode(),
	}
	if err := v.rn.ProposeConfChange(cc); err != nil {
		return fmt.Errorf("quorum: propose voter change: %w", err)
	}
	c.index, v.confIndex = index, index
	v.log.Info("voter change proposed", "change", typ.String(), "voter", c.member.Key(), "index", index)
	return nil
}

// applyMembership takes the membership a conf change entry carries and
// moves the leader's pending change on.
func (v *Voter) applyMembership(index uint64, ctx []byte) error {
	if v.opts.Dynamic {
		ms, err := DecodeMembership(ctx)
		if err != nil {
			return fmt.Errorf("quorum: conf change at index %d: %w", index, err)
		}
		v.members = ms
		if v.opts.OnMembership != nil {
			v.opts.OnMembership(v.Membership())
		}
	}
	return nil
}

// changeApplied is called after the entry at index applied: a change
// waiting on it moves on (isConf false: Raft refused the conf change and
// appended an empty entry in its place).
func (v *Voter) changeApplied(index uint64, isConf bool) {
	c := v.change
	if c == nil || c.index != index {
		return
	}
	if !isConf {
		v.finishChange(fmt.Errorf("%w: the voter change at offset %d was refused by Raft", ErrChangeTimedOut, index-1))
		return
	}
	switch c.stage {
	case stageLearner:
		c.stage, c.index, c.target = stageCatchUp, 0, v.storage.lastIndex()
	case stageCommit:
		v.finishChange(nil)
	}
}

func (v *Voter) finishChange(err error) {
	c := v.change
	v.change = nil
	if err != nil {
		v.log.Warn("voter change failed", "voter", c.member.Key(), "err", err)
	} else {
		v.log.Info("voter change committed", "voter", c.member.Key(), "index", c.index)
	}
	c.done(err)
}

// advanceChange runs after each Process on a drained Ready: it promotes a
// learner that caught up, rolls back one that did not in time, and fails
// a change whose leader lost its leadership.
func (v *Voter) advanceChange() error {
	c := v.change
	if c == nil {
		return nil
	}
	st := v.rn.BasicStatus()
	if st.RaftState != raft.StateLeader {
		v.finishChange(NotLeaderError{Leader: NodeID(st.Lead)})
		return nil
	}
	now := v.opts.Clock.Now()
	switch c.stage {
	case stageCatchUp:
		if v.learnerMatch(c.member.ID) >= c.target {
			promoted := c.member
			promoted.Learner = false
			c.stage, c.member = stageCommit, promoted
			return v.proposeConf(c, v.members.with(promoted), raftpb.ConfChangeAddNode)
		}
		if now.After(c.deadline) {
			key := c.member.Key()
			v.finishChange(fmt.Errorf("%w: Aborted add voter operation for %s since it is lagging behind", ErrChangeTimedOut, key))
			rollback := &memberChange{member: c.member, stage: stageCommit, deadline: now.Add(time.Hour), done: func(error) {}}
			if err := v.proposeConf(rollback, v.members.without(c.member.ID), raftpb.ConfChangeRemoveNode); err != nil {
				return err
			}
			v.change = rollback
		}
	default:
		if now.After(c.deadline) {
			v.finishChange(fmt.Errorf("%w: the voter change at offset %d did not commit in time", ErrChangeTimedOut, c.index-1))
		}
	}
	return nil
}

// learnerMatch is the leader's view of a member's log end (Raft index).
func (v *Voter) learnerMatch(id int32) uint64 {
	var match uint64
	v.rn.WithProgress(func(pid uint64, _ raft.ProgressType, pr tracker.Progress) {
		if pid == RaftID(id) {
			match = pr.Match
		}
	})
	return match
}

// bootstrapEntries are a new dynamic quorum's first entries, as etcd
// Raft's Bootstrap makes them: one AddNode per initial voter in term 1,
// each carrying the membership so far. Every initial controller writes the
// same ones, so their logs agree; a controller added later replays them.
func bootstrapEntries(initial []Member) ([]*raftpb.Entry, error) {
	ms := Membership{}
	var out []*raftpb.Entry
	for i, m := range initial {
		m.Learner = false
		ms = ms.with(m)
		cc := &raftpb.ConfChange{Type: raftpb.ConfChangeAddNode.Enum(), NodeId: proto.Uint64(RaftID(m.ID)), Context: ms.Encode()}
		data, err := proto.Marshal(cc)
		if err != nil {
			return nil, fmt.Errorf("quorum: bootstrap entry: %w", err)
		}
		out = append(out, &raftpb.Entry{Type: raftpb.EntryConfChange.Enum(), Term: proto.Uint64(1), Index: proto.Uint64(uint64(i) + 1), Data: data})
	}
	return out, nil
}
