package quorum

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-io/sluice/internal/clock"
)

// Voter is one Raft voter without goroutines: the RawNode, its storage, the
// state machine calls and snapshots, stepped by its caller. The Driver runs
// one on a loop goroutine with a real ticker; the simulation steps many in
// one goroutine under a manual clock, so a seed replays exactly. A Voter is
// not safe for concurrent use.
type Voter struct {
	opts    Options
	log     *slog.Logger
	rn      *raft.RawNode
	storage *raftStorage
	// latencies is written on the caller's goroutine, read by scrapes.
	latencies *RaftLatencies

	pending     map[uint64]waiter
	applied     uint64
	startCommit uint64
	replayed    bool
	stopped     error

	// lastApplied is the offset of the last entry handed to Apply, or of
	// the restored snapshot (-1: none): the offset of the state machine's
	// image, which ProposeAfter compares.
	lastApplied int64

	// Snapshot accounting: bytes of entries applied since the last snapshot
	// and when it was taken.
	appliedBytes int64
	lastSnapshot time.Time

	// A dynamic quorum's applied membership (membership.go), the leader's
	// change in progress, and the index of the last conf change this
	// leader proposed (a new one waits until it is applied).
	members   Membership
	change    *memberChange
	confIndex uint64
}

type waiter struct {
	term     uint64
	proposed time.Time
	done     func(offset int64, err error)
}

// NewVoter loads the hard state, the latest snapshot (handed to the
// snapshot Restore) and the entries after it, and builds the voter. The
// committed entries after the snapshot are handed to Apply again as the
// voter runs.
func NewVoter(opts Options) (*Voter, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	hs, err := readHardState(opts.FS, opts.Dir)
	if err != nil {
		return nil, err
	}
	// A static quorum's voters are its configuration; a dynamic one's
	// come from its snapshot and the conf changes in its log.
	conf := &raftpb.ConfState{}
	if !opts.Dynamic {
		for _, v := range opts.Voters {
			conf.Voters = append(conf.Voters, RaftID(v))
		}
	}
	storage := &raftStorage{hard: hs, conf: conf}
	log := opts.Logger.With("component", "quorum", "node", opts.NodeID)
	v := &Voter{opts: opts, log: log, storage: storage, latencies: &RaftLatencies{}, pending: map[uint64]waiter{}, lastApplied: -1}
	if sn := opts.Snapshots; sn != nil {
		snap, err := sn.Store.Latest()
		if err != nil {
			return nil, err
		}
		if snap != nil {
			if err := v.checkConf(snap); err != nil {
				return nil, err
			}
			if err := v.restore(snap); err != nil {
				return nil, err
			}
			storage.applySnapshot(snap)
		}
		v.lastSnapshot = sn.Clock.Now()
	}
	entries, err := opts.Store.Load()
	if err != nil {
		return nil, fmt.Errorf("quorum: load entries: %w", err)
	}
	if entries, hs, err = v.maybeBootstrap(entries, hs); err != nil {
		return nil, err
	}
	// A crash after a snapshot from the leader was saved but before the log
	// was reset leaves a log ending before the snapshot: reset it now, or
	// the next append would leave a gap.
	if storage.offset > 0 && (len(entries) == 0 || entries[len(entries)-1].GetIndex() < storage.offset) {
		if err := opts.Store.Reset(storage.offset); err != nil {
			return nil, err
		}
		entries = nil
	}
	// Entries the snapshot covers stay on disk until their segment goes.
	for len(entries) > 0 && entries[0].GetIndex() <= storage.offset {
		entries = entries[1:]
	}
	if len(entries) > 0 && entries[0].GetIndex() != storage.offset+1 {
		return nil, fmt.Errorf("quorum: stored entries start at index %d, but the latest snapshot ends at %d", entries[0].GetIndex(), storage.offset)
	}
	storage.entries = entries
	// A snapshot from the leader is made durable before the hard state that
	// follows it, so a crash between the two leaves the commit behind it.
	if hs.GetCommit() < storage.offset {
		hs.Commit = proto.Uint64(storage.offset)
	}
	if hs.GetCommit() > storage.lastIndex() {
		return nil, fmt.Errorf("quorum: %s commit index %d beyond the last stored entry %d", QuorumStateFile, hs.GetCommit(), storage.lastIndex())
	}
	v.applied, v.startCommit = storage.offset, hs.GetCommit()
	rn, err := raft.NewRawNode(&raft.Config{
		ID:                        RaftID(opts.NodeID),
		ElectionTick:              opts.timing().ElectionTicks(),
		HeartbeatTick:             opts.timing().HeartbeatTicks(),
		Storage:                   storage,
		Applied:                   storage.offset,
		MaxSizePerMsg:             1 << 20,
		MaxCommittedSizePerReady:  64 << 20,
		MaxInflightMsgs:           256,
		CheckQuorum:               true,
		PreVote:                   true,
		DisableProposalForwarding: true,
		StepDownOnRemoval:         true,
		Logger:                    raftLogger{log: log},
	})
	if err != nil {
		return nil, fmt.Errorf("quorum: start raft: %w", err)
	}
	v.rn = rn
	v.markReplayed()
	return v, nil
}

// checkConf refuses a snapshot of another voter set: static voters must
// agree. A dynamic quorum's snapshot carries its own.
func (v *Voter) checkConf(snap *raftpb.Snapshot) error {
	if v.opts.Dynamic {
		return nil
	}
	got, want := snap.GetMetadata().GetConfState().GetVoters(), v.storage.conf.GetVoters()
	if len(got) != len(want) {
		return fmt.Errorf("quorum: snapshot at index %d has voters %v, controller.quorum.voters gives %v", snap.GetMetadata().GetIndex(), got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Errorf("quorum: snapshot at index %d has voters %v, controller.quorum.voters gives %v", snap.GetMetadata().GetIndex(), got, want)
		}
	}
	return nil
}

// restore hands a snapshot to the state machine.
func (v *Voter) restore(snap *raftpb.Snapshot) error {
	md := snap.GetMetadata()
	ms, data, ok, err := UnwrapSnapshotData(snap.GetData())
	if err != nil {
		return fmt.Errorf("quorum: snapshot at index %d: %w", md.GetIndex(), err)
	}
	if ok != v.opts.Dynamic {
		return fmt.Errorf("quorum: snapshot at index %d: dynamic membership %v, this voter's quorum dynamic %v", md.GetIndex(), ok, v.opts.Dynamic)
	}
	if ok {
		v.members = ms
		if v.opts.OnMembership != nil {
			v.opts.OnMembership(v.Membership())
		}
	}
	if err := v.opts.Snapshots.Restore(int64(md.GetIndex())-1, int32(md.GetTerm()), data); err != nil {
		return fmt.Errorf("quorum: restore snapshot at index %d: %w", md.GetIndex(), err)
	}
	v.applied = md.GetIndex()
	v.lastApplied = int64(md.GetIndex()) - 1
	v.appliedBytes = 0
	return nil
}

// Err is the error that stopped the voter (disk, state machine), or nil.
func (v *Voter) Err() error { return v.stopped }

// Tick advances Raft's logical clock by one tick.
func (v *Voter) Tick() { v.rn.Tick() }

// Campaign starts an election at once (a lone voter need not wait).
func (v *Voter) Campaign() error { return v.rn.Campaign() }

// Step hands the voter a message from another voter after checking it is
// well formed: Raft trusts its peers and panics on some impossible
// messages, so a bad one is refused here with an error.
func (v *Voter) Step(m *raftpb.Message) error {
	if err := v.validate(m); err != nil {
		return err
	}
	return v.rn.Step(m)
}

// ReportUnreachable tells Raft a peer could not be reached.
func (v *Voter) ReportUnreachable(nodeID int32) { v.rn.ReportUnreachable(RaftID(nodeID)) }

// ReportSnapshot tells Raft whether a snapshot reached a peer.
func (v *Voter) ReportSnapshot(nodeID int32, failed bool) {
	status := raft.SnapshotFinish
	if failed {
		status = raft.SnapshotFailure
	}
	v.rn.ReportSnapshot(RaftID(nodeID), status)
}

// Propose appends data through Raft; done is called once with the entry's
// offset when it is committed and applied, or with an error. On a voter
// that is not the leader it is called at once with a NotLeaderError.
func (v *Voter) Propose(data []byte, done func(offset int64, err error)) {
	if v.stopped != nil {
		done(-1, fmt.Errorf("%w: %w", ErrStopped, v.stopped))
		return
	}
	st := v.rn.BasicStatus()
	if st.RaftState != raft.StateLeader {
		done(-1, NotLeaderError{Leader: NodeID(st.Lead)})
		return
	}
	// Ready was drained before this, so every entry Raft holds is in
	// storage and the proposal takes the next index.
	index := v.storage.lastIndex() + 1
	if err := v.rn.Propose(data); err != nil {
		done(-1, fmt.Errorf("quorum: propose: %w", err))
		return
	}
	v.pending[index] = waiter{term: st.GetTerm(), proposed: v.opts.Clock.Now(), done: done}
}

// ProposeAfter is Propose for records computed on the state machine's
// image at imageOffset (see Driver.ProposeAfter).
func (v *Voter) ProposeAfter(data []byte, imageOffset int64, done func(offset int64, err error)) {
	st := v.rn.BasicStatus()
	if st.RaftState == raft.StateLeader {
		if term, err := v.storage.Term(v.applied); err != nil || term != st.GetTerm() {
			done(-1, NotLeaderError{Leader: v.opts.NodeID, Cause: ErrLeaderNotReady})
			return
		}
		if imageOffset != v.lastApplied {
			done(-1, NotLeaderError{Leader: v.opts.NodeID, Cause: ErrStaleImage})
			return
		}
	}
	v.Propose(data, done)
}

// FailPending fails every waiting proposal and membership change (the
// voter is stopping).
func (v *Voter) FailPending(err error) {
	if v.change != nil {
		v.finishChange(err)
	}
	for idx, w := range v.pending {
		delete(v.pending, idx)
		w.done(-1, err)
	}
}

// Replayed reports whether every entry committed before the start has been
// applied: the state machine then reflects at least what was on disk.
func (v *Voter) Replayed() bool { return v.replayed }

// Status returns the voter's view.
func (v *Voter) Status() Status {
	st := v.rn.BasicStatus()
	return Status{
		NodeID:         v.opts.NodeID,
		Leader:         NodeID(st.Lead),
		Epoch:          int64(st.GetTerm()),
		IsLeader:       st.RaftState == raft.StateLeader,
		CommitOffset:   int64(st.GetCommit()) - 1,
		AppliedOffset:  int64(v.applied) - 1,
		LogStartOffset: int64(v.storage.offset),
		Replicas:       v.replicas(st.RaftState == raft.StateLeader),
		State:          raftStateName(st),
		Vote:           raftVote(v.opts.NodeID, st),
		LogEndOffset:   int64(v.storage.lastIndex()),
		LogEndEpoch:    v.lastTerm(),
		Dynamic:        v.opts.Dynamic,
		Members:        v.Membership().Members,
	}
}

// lastTerm is the term of the last entry (or of the snapshot before it).
func (v *Voter) lastTerm() int32 {
	term, err := v.storage.Term(v.storage.lastIndex())
	if err != nil {
		return 0
	}
	return int32(term)
}

func (v *Voter) replicas(isLeader bool) []ReplicaProgress {
	if !isLeader {
		return nil
	}
	var out []ReplicaProgress
	v.rn.WithProgress(func(id uint64, _ raft.ProgressType, pr tracker.Progress) {
		out = append(out, ReplicaProgress{NodeID: NodeID(id), EndOffset: int64(pr.Match), RecentActive: pr.RecentActive || id == RaftID(v.opts.NodeID), Learner: pr.IsLearner})
	})
	slices.SortFunc(out, func(a, b ReplicaProgress) int { return int(a.NodeID) - int(b.NodeID) })
	return out
}

func (v *Voter) markReplayed() {
	if !v.replayed && v.applied >= v.startCommit {
		v.replayed = true
	}
}

// Process handles every pending Ready in the order Raft requires: snapshot,
// entries and hard state durable first, then messages out, then committed
// entries to the state machine, then Advance; then it takes a snapshot if
// one is due. An error stops the voter for good: its disk or its state
// machine can no longer be trusted.
func (v *Voter) Process() error {
	if v.stopped != nil {
		return v.stopped
	}
	err := v.process()
	if err == nil {
		// A change moved on (a promotion or a rollback proposed): its
		// entry goes out in this same call.
		if err = v.advanceChange(); err == nil && v.rn.HasReady() {
			err = v.process()
		}
	}
	if err != nil {
		v.stopped = err
		v.FailPending(fmt.Errorf("%w: %w", ErrStopped, err))
		return err
	}
	return nil
}

func (v *Voter) process() error {
	for v.rn.HasReady() {
		rd := v.rn.Ready()
		if rd.SoftState != nil {
			v.latencies.roleChanged(*rd.SoftState, v.opts.Clock.Now())
		}
		if rd.Snapshot != nil && !raft.IsEmptySnap(rd.Snapshot) {
			if err := v.installSnapshot(rd.Snapshot); err != nil {
				return err
			}
		}
		if len(rd.Entries) > 0 {
			if err := v.opts.Store.Append(rd.Entries); err != nil {
				return err
			}
			if err := v.storage.append(rd.Entries); err != nil {
				return err
			}
		}
		if rd.HardState != nil && !raft.IsEmptyHardState(rd.HardState) {
			if err := writeHardState(v.opts.FS, v.opts.Dir, rd.HardState); err != nil {
				return err
			}
			v.storage.hard = proto.Clone(rd.HardState).(*raftpb.HardState)
		}
		if v.opts.Transport != nil && len(rd.Messages) > 0 {
			v.opts.Transport.Send(rd.Messages)
		}
		for _, e := range rd.CommittedEntries {
			if err := v.applyEntry(e); err != nil {
				return err
			}
		}
		v.rn.Advance(rd)
		v.markReplayed()
	}
	return v.maybeSnapshot()
}

// installSnapshot makes a snapshot from the leader durable, replaces the
// log by it and restores the state machine from it.
func (v *Voter) installSnapshot(snap *raftpb.Snapshot) error {
	if v.opts.Snapshots == nil {
		return errors.New("quorum: received a snapshot but snapshots are not configured")
	}
	if err := v.checkConf(snap); err != nil {
		return err
	}
	index := snap.GetMetadata().GetIndex()
	if err := v.opts.Snapshots.Store.Save(snap); err != nil {
		return err
	}
	if err := v.opts.Store.Reset(index); err != nil {
		return err
	}
	v.storage.applySnapshot(snap)
	if err := v.restore(snap); err != nil {
		return err
	}
	v.lastSnapshot = v.opts.Snapshots.Clock.Now()
	// Proposals at or below the snapshot may or may not have committed.
	for idx, w := range v.pending {
		if idx <= index {
			delete(v.pending, idx)
			w.done(-1, ErrProposalOutcomeUnknown)
		}
	}
	v.log.Info("installed snapshot from the leader", "index", index, "term", snap.GetMetadata().GetTerm())
	return nil
}

func (v *Voter) applyEntry(e *raftpb.Entry) error {
	if e.GetIndex() <= v.applied {
		return nil // covered by a snapshot installed in the same Ready
	}
	switch e.GetType() {
	case raftpb.EntryConfChange:
		cc := &raftpb.ConfChange{}
		if err := proto.Unmarshal(e.GetData(), cc); err != nil {
			return fmt.Errorf("quorum: conf change at index %d: %w", e.GetIndex(), err)
		}
		v.storage.conf = v.rn.ApplyConfChange(cc)
		if err := v.applyMembership(e.GetIndex(), cc.GetContext()); err != nil {
			return err
		}
		v.changeApplied(e.GetIndex(), true)
	case raftpb.EntryConfChangeV2:
		cc := &raftpb.ConfChangeV2{}
		if err := proto.Unmarshal(e.GetData(), cc); err != nil {
			return fmt.Errorf("quorum: conf change at index %d: %w", e.GetIndex(), err)
		}
		v.storage.conf = v.rn.ApplyConfChange(cc)
		if err := v.applyMembership(e.GetIndex(), cc.GetContext()); err != nil {
			return err
		}
		v.changeApplied(e.GetIndex(), true)
	case raftpb.EntryNormal:
		v.changeApplied(e.GetIndex(), false)
		if len(e.GetData()) > 0 {
			c := Committed{Offset: int64(e.GetIndex()) - 1, Epoch: int32(e.GetTerm()), Data: e.GetData()}
			if err := v.opts.Apply(c); err != nil {
				return fmt.Errorf("quorum: apply offset %d: %w", c.Offset, err)
			}
			v.lastApplied = c.Offset
		}
	}
	v.applied = e.GetIndex()
	v.appliedBytes += int64(len(e.GetData()))
	if w, ok := v.pending[e.GetIndex()]; ok {
		delete(v.pending, e.GetIndex())
		if w.term == e.GetTerm() {
			now := v.opts.Clock.Now()
			v.latencies.recordCommit(now.Sub(w.proposed), now)
			w.done(int64(e.GetIndex())-1, nil)
		} else {
			w.done(-1, ErrProposalLost)
		}
	}
	return nil
}

// maybeSnapshot takes a snapshot of the state machine at the applied index
// once enough bytes were applied since the last one, or enough time passed
// with something applied; then it compacts the log behind it, keeping
// TrailingEntries so a voter slightly behind still gets entries.
func (v *Voter) maybeSnapshot() error {
	sn := v.opts.Snapshots
	if sn == nil || v.appliedBytes == 0 {
		return nil
	}
	now := sn.Clock.Now()
	if v.appliedBytes < sn.MaxBytesBetween && now.Sub(v.lastSnapshot) < sn.MaxInterval {
		return nil
	}
	term, err := v.storage.Term(v.applied)
	if err != nil {
		return fmt.Errorf("quorum: snapshot at index %d: %w", v.applied, err)
	}
	data, err := sn.Take()
	if err != nil {
		return fmt.Errorf("quorum: snapshot at index %d: %w", v.applied, err)
	}
	if v.opts.Dynamic {
		data = wrapSnapshotData(v.members, data)
	}
	snap := &raftpb.Snapshot{Data: data, Metadata: &raftpb.SnapshotMetadata{
		Index: proto.Uint64(v.applied), Term: proto.Uint64(term), ConfState: proto.Clone(v.storage.conf).(*raftpb.ConfState),
	}}
	if err := sn.Store.Save(snap); err != nil {
		return err
	}
	v.storage.snap = snap
	v.appliedBytes, v.lastSnapshot = 0, now
	if v.applied <= sn.TrailingEntries {
		return nil
	}
	compactTo := v.applied - sn.TrailingEntries
	if err := v.storage.compact(compactTo); err != nil {
		return err
	}
	if err := v.opts.Store.Compact(compactTo); err != nil {
		return err
	}
	v.log.Debug("metadata log compacted behind a snapshot", "snapshot_index", v.applied, "log_start_index", compactTo)
	return nil
}

// SnapshotOptions turn snapshots on.
type SnapshotOptions struct {
	// Store keeps the snapshots durably.
	Store SnapshotStore
	// Take encodes the state machine as of the last applied entry.
	Take func() ([]byte, error)
	// Restore replaces the state machine by a snapshot's: at start-up and
	// when the leader sends one. offset and epoch are those of the last
	// entry it covers.
	Restore func(offset int64, epoch int32, data []byte) error
	// MaxBytesBetween is metadata.log.max.record.bytes.between.snapshots
	// (default 20 MiB): entry bytes applied before the next snapshot.
	MaxBytesBetween int64
	// MaxInterval is metadata.log.max.snapshot.interval.ms (default 1 h):
	// a snapshot is taken after it if anything was applied.
	MaxInterval time.Duration
	// TrailingEntries are kept in the log behind a snapshot so a voter a
	// little behind catches up from entries rather than a whole snapshot.
	TrailingEntries uint64
	// Clock measures MaxInterval.
	Clock clock.Clock
}
