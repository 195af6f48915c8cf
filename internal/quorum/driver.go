package quorum

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"sluice/internal/vfs"
)

// Errors of the driver.
var (
	// ErrNotLeader is returned by Propose on a voter that is not the leader
	// (Kafka's NOT_CONTROLLER); NotLeaderError carries the known leader.
	ErrNotLeader = errors.New("quorum: not the leader")
	// ErrProposalLost says the proposal's index was taken by another
	// leader's entry: it was not committed and may be retried.
	ErrProposalLost = errors.New("quorum: proposal lost to a leader change")
	// ErrStopped is returned once the driver has stopped.
	ErrStopped = errors.New("quorum: driver stopped")
)

// NotLeaderError is ErrNotLeader with the leader this voter knows (-1: none).
type NotLeaderError struct{ Leader int32 }

func (e NotLeaderError) Error() string {
	return fmt.Sprintf("quorum: not the leader (leader %d)", e.Leader)
}

// Unwrap makes errors.Is(err, ErrNotLeader) hold.
func (e NotLeaderError) Unwrap() error { return ErrNotLeader }

// RaftID maps a Kafka node id to a Raft id: Raft reserves 0 for "none",
// Kafka node ids start at 0.
func RaftID(nodeID int32) uint64 { return uint64(nodeID) + 1 }

// NodeID maps a Raft id back to a Kafka node id (Raft's 0 becomes -1).
func NodeID(raftID uint64) int32 { return int32(raftID) - 1 }

// Committed is one committed entry handed to the state machine.
type Committed struct {
	// Offset is the entry's offset in __cluster_metadata-0 (Raft index - 1).
	Offset int64
	// Epoch is the entry's leader epoch (Raft term).
	Epoch int32
	// Data is the proposal's bytes.
	Data []byte
}

// Options configure a Driver.
type Options struct {
	// NodeID is this voter's node.id.
	NodeID int32
	// Voters are the node ids of controller.quorum.voters (static).
	Voters []int32
	// ElectionTimeout is controller.quorum.election.timeout.ms (default 1s).
	// Raft counts it in ticks: ElectionTick = ElectionTimeout / TickInterval,
	// randomized by Raft to [1x, 2x) per election as Kafka randomizes its
	// election backoff. With CheckQuorum, a leader that has not heard from a
	// majority for one election timeout steps down (Kafka's fetch timeout).
	ElectionTimeout time.Duration
	// TickInterval is the Raft tick and the heartbeat interval (default 100ms).
	TickInterval time.Duration
	// FS and Dir locate the quorum-state file (the metadata log directory).
	FS  vfs.FS
	Dir string
	// Store holds the entries durably; the caller closes it after Stop.
	Store EntryStore
	// Transport sends messages to other voters; nil for a single voter.
	Transport Transport
	// Apply is the state machine: called on the driver's loop for every
	// committed entry with data, in log order, exactly once per start (the
	// whole log is replayed after a restart). An error stops the driver.
	Apply func(Committed) error
	// Logger receives the driver's and Raft's logs.
	Logger *slog.Logger
}

// Status is a voter's view of the quorum.
type Status struct {
	NodeID   int32
	Leader   int32 // -1: unknown
	Epoch    int64 // Raft term
	IsLeader bool
	// CommitOffset and AppliedOffset are offsets (-1: none).
	CommitOffset  int64
	AppliedOffset int64
}

type proposeResult struct {
	offset int64
	err    error
}

type proposal struct {
	data []byte
	done chan proposeResult // buffered: the loop never blocks on it
}

type waiter struct {
	term uint64
	done chan proposeResult
}

// Driver runs one Raft voter: one loop goroutine, started by Start and
// ended by Stop, owns the RawNode, the storage and the state machine calls.
type Driver struct {
	opts    Options
	log     *slog.Logger
	rn      *raft.RawNode
	storage *raftStorage

	recvc    chan *raftpb.Message
	propc    chan proposal
	stopc    chan struct{}
	donec    chan struct{}
	replayed chan struct{}

	startOnce sync.Once
	stopOnce  sync.Once
	status    atomic.Pointer[Status]
	failure   atomic.Pointer[error]

	// Loop-only state.
	pending     map[uint64]waiter
	applied     uint64
	startCommit uint64
	isReplayed  bool
}

// inboxSize bounds queued incoming messages; beyond it they are dropped,
// which Raft tolerates.
const inboxSize = 4096

// New loads the hard state and the entries and builds the voter. The whole
// committed log is handed to Apply again once the driver starts.
func New(opts Options) (*Driver, error) {
	if opts.ElectionTimeout <= 0 {
		opts.ElectionTimeout = time.Second
	}
	if opts.TickInterval <= 0 {
		opts.TickInterval = 100 * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Store == nil || opts.Apply == nil || opts.FS == nil {
		return nil, errors.New("quorum: Options need Store, Apply and FS")
	}
	if len(opts.Voters) > 1 && opts.Transport == nil {
		return nil, errors.New("quorum: several voters need a Transport")
	}
	hs, err := readHardState(opts.FS, opts.Dir)
	if err != nil {
		return nil, err
	}
	entries, err := opts.Store.Load()
	if err != nil {
		return nil, fmt.Errorf("quorum: load entries: %w", err)
	}
	if hs.GetCommit() > uint64(len(entries)) {
		return nil, fmt.Errorf("quorum: %s commit index %d beyond the last stored entry %d", QuorumStateFile, hs.GetCommit(), len(entries))
	}
	conf := &raftpb.ConfState{}
	for _, v := range opts.Voters {
		conf.Voters = append(conf.Voters, RaftID(v))
	}
	storage := &raftStorage{hard: hs, conf: conf, entries: entries}
	electionTicks := int(opts.ElectionTimeout / opts.TickInterval)
	if electionTicks < 2 {
		electionTicks = 2
	}
	log := opts.Logger.With("component", "quorum", "node", opts.NodeID)
	rn, err := raft.NewRawNode(&raft.Config{
		ID:                        RaftID(opts.NodeID),
		ElectionTick:              electionTicks,
		HeartbeatTick:             1,
		Storage:                   storage,
		MaxSizePerMsg:             1 << 20,
		MaxCommittedSizePerReady:  64 << 20,
		MaxInflightMsgs:           256,
		CheckQuorum:               true,
		PreVote:                   true,
		DisableProposalForwarding: true,
		Logger:                    raftLogger{log: log},
	})
	if err != nil {
		return nil, fmt.Errorf("quorum: start raft: %w", err)
	}
	d := &Driver{
		opts: opts, log: log, rn: rn, storage: storage,
		recvc: make(chan *raftpb.Message, inboxSize), propc: make(chan proposal),
		stopc: make(chan struct{}), donec: make(chan struct{}), replayed: make(chan struct{}),
		pending: map[uint64]waiter{}, startCommit: hs.GetCommit(),
	}
	d.publishStatus()
	return d, nil
}

// Start starts the loop goroutine.
func (d *Driver) Start() {
	d.startOnce.Do(func() { go d.run() })
}

// Stop ends the loop and waits for it (or for ctx). Pending proposals fail
// with ErrStopped. It returns the error that stopped the driver, if any.
func (d *Driver) Stop(ctx context.Context) error {
	d.startOnce.Do(func() { close(d.donec) }) // never started: nothing to wait for
	d.stopOnce.Do(func() { close(d.stopc) })
	select {
	case <-d.donec:
		return d.Err()
	case <-ctx.Done():
		return fmt.Errorf("quorum: stop: %w", ctx.Err())
	}
}

// Err returns the error that stopped the driver (disk failure, state
// machine refusal), or nil.
func (d *Driver) Err() error {
	if e := d.failure.Load(); e != nil {
		return *e
	}
	return nil
}

// Replayed is closed once every entry committed before the start has been
// applied: the state machine then reflects at least what was on disk.
func (d *Driver) Replayed() <-chan struct{} { return d.replayed }

// Status returns the voter's latest view.
func (d *Driver) Status() Status { return *d.status.Load() }

// Step hands the driver a message from another voter. It never blocks: when
// the inbox is full the message is dropped. Messages not addressed to this
// voter and proposals (only the local leader proposes) are dropped too.
func (d *Driver) Step(msg *raftpb.Message) {
	if msg.GetTo() != RaftID(d.opts.NodeID) || msg.GetType() == raftpb.MsgProp {
		d.log.Debug("raft message refused", "type", msg.GetType().String(), "from", msg.GetFrom(), "to", msg.GetTo())
		return
	}
	select {
	case d.recvc <- msg:
	default:
		d.log.Debug("raft inbox full, message dropped", "type", msg.GetType().String(), "from", msg.GetFrom())
	}
}

// Propose appends data to the log through Raft and returns once the entry
// is committed and applied, with its offset. On a voter that is not the
// leader it fails at once with a NotLeaderError.
func (d *Driver) Propose(ctx context.Context, data []byte) (int64, error) {
	p := proposal{data: data, done: make(chan proposeResult, 1)}
	select {
	case d.propc <- p:
	case <-ctx.Done():
		return -1, ctx.Err()
	case <-d.donec:
		return -1, d.stoppedErr()
	}
	select {
	case r := <-p.done:
		return r.offset, r.err
	case <-ctx.Done():
		return -1, ctx.Err()
	case <-d.donec:
		select {
		case r := <-p.done:
			return r.offset, r.err
		default:
			return -1, d.stoppedErr()
		}
	}
}

func (d *Driver) stoppedErr() error {
	if err := d.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrStopped, err)
	}
	return ErrStopped
}

func (d *Driver) run() {
	defer close(d.donec)
	ticker := time.NewTicker(d.opts.TickInterval)
	defer ticker.Stop()
	if len(d.opts.Voters) == 1 && d.opts.Voters[0] == d.opts.NodeID {
		// A lone voter need not wait out an election timeout.
		if err := d.rn.Campaign(); err != nil {
			d.log.Warn("campaign failed", "err", err)
		}
	}
	for {
		if err := d.drainReady(); err != nil {
			d.failure.Store(&err)
			d.log.Error("quorum driver stopped", "err", err)
			d.failPending(fmt.Errorf("%w: %w", ErrStopped, err))
			return
		}
		select {
		case <-d.stopc:
			d.failPending(ErrStopped)
			return
		case <-ticker.C:
			d.rn.Tick()
		case m := <-d.recvc:
			if err := d.rn.Step(m); err != nil {
				d.log.Debug("raft refused a message", "type", m.GetType().String(), "from", m.GetFrom(), "err", err)
			}
		case p := <-d.propc:
			d.propose(p)
		}
	}
}

func (d *Driver) propose(p proposal) {
	st := d.rn.BasicStatus()
	if st.RaftState != raft.StateLeader {
		p.done <- proposeResult{offset: -1, err: NotLeaderError{Leader: NodeID(st.Lead)}}
		return
	}
	// drainReady ran before this, so every entry Raft holds is in storage
	// and the proposal takes the next index.
	index := uint64(len(d.storage.entries)) + 1
	if err := d.rn.Propose(p.data); err != nil {
		p.done <- proposeResult{offset: -1, err: fmt.Errorf("quorum: propose: %w", err)}
		return
	}
	d.pending[index] = waiter{term: st.GetTerm(), done: p.done}
}

// drainReady handles every Ready in the order Raft requires: entries and
// hard state durable first, then messages out, then committed entries to
// the state machine, then Advance.
func (d *Driver) drainReady() error {
	for d.rn.HasReady() {
		rd := d.rn.Ready()
		if len(rd.Entries) > 0 {
			if err := d.opts.Store.Append(rd.Entries); err != nil {
				return err
			}
			if err := d.storage.append(rd.Entries); err != nil {
				return err
			}
		}
		if rd.HardState != nil && !raft.IsEmptyHardState(rd.HardState) {
			if err := writeHardState(d.opts.FS, d.opts.Dir, rd.HardState); err != nil {
				return err
			}
			d.storage.hard = proto.Clone(rd.HardState).(*raftpb.HardState)
		}
		if d.opts.Transport != nil && len(rd.Messages) > 0 {
			d.opts.Transport.Send(rd.Messages)
		}
		for _, e := range rd.CommittedEntries {
			if err := d.applyEntry(e); err != nil {
				return err
			}
		}
		d.rn.Advance(rd)
		d.publishStatus()
	}
	return nil
}

func (d *Driver) applyEntry(e *raftpb.Entry) error {
	switch e.GetType() {
	case raftpb.EntryConfChange:
		cc := &raftpb.ConfChange{}
		if err := proto.Unmarshal(e.GetData(), cc); err != nil {
			return fmt.Errorf("quorum: conf change at index %d: %w", e.GetIndex(), err)
		}
		d.storage.conf = d.rn.ApplyConfChange(cc)
	case raftpb.EntryConfChangeV2:
		cc := &raftpb.ConfChangeV2{}
		if err := proto.Unmarshal(e.GetData(), cc); err != nil {
			return fmt.Errorf("quorum: conf change at index %d: %w", e.GetIndex(), err)
		}
		d.storage.conf = d.rn.ApplyConfChange(cc)
	case raftpb.EntryNormal:
		if len(e.GetData()) > 0 {
			c := Committed{Offset: int64(e.GetIndex()) - 1, Epoch: int32(e.GetTerm()), Data: e.GetData()}
			if err := d.opts.Apply(c); err != nil {
				return fmt.Errorf("quorum: apply offset %d: %w", c.Offset, err)
			}
		}
	}
	d.applied = e.GetIndex()
	if w, ok := d.pending[e.GetIndex()]; ok {
		delete(d.pending, e.GetIndex())
		if w.term == e.GetTerm() {
			w.done <- proposeResult{offset: int64(e.GetIndex()) - 1}
		} else {
			w.done <- proposeResult{offset: -1, err: ErrProposalLost}
		}
	}
	return nil
}

func (d *Driver) failPending(err error) {
	for idx, w := range d.pending {
		w.done <- proposeResult{offset: -1, err: err}
		delete(d.pending, idx)
	}
}

func (d *Driver) publishStatus() {
	st := d.rn.BasicStatus()
	d.status.Store(&Status{
		NodeID:        d.opts.NodeID,
		Leader:        NodeID(st.Lead),
		Epoch:         int64(st.GetTerm()),
		IsLeader:      st.RaftState == raft.StateLeader,
		CommitOffset:  int64(st.GetCommit()) - 1,
		AppliedOffset: int64(d.applied) - 1,
	})
	if !d.isReplayed && d.applied >= d.startCommit {
		d.isReplayed = true
		close(d.replayed)
	}
}
