package quorum

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/vfs"
)

// Errors of the driver.
var (
	// ErrNotLeader is returned by Propose on a voter that is not the leader
	// (Kafka's NOT_CONTROLLER); NotLeaderError carries the known leader.
	ErrNotLeader = errors.New("quorum: not the leader")
	// ErrProposalLost says the proposal's index was taken by another
	// leader's entry: it was not committed and may be retried.
	ErrProposalLost = errors.New("quorum: proposal lost to a leader change")
	// ErrProposalOutcomeUnknown says a snapshot from the leader replaced the
	// log past the proposal's index: it may or may not have committed.
	ErrProposalOutcomeUnknown = errors.New("quorum: proposal outcome unknown after a snapshot from the leader")
	// ErrStopped is returned once the driver has stopped.
	ErrStopped = errors.New("quorum: driver stopped")
)

// NotLeaderError is ErrNotLeader with the leader this voter knows (-1:
// none). A leader that may not take the proposal yet returns it too, naming
// itself, with the Cause (ErrLeaderNotReady, ErrStaleImage): for a client
// both are a retriable NOT_CONTROLLER.
type NotLeaderError struct {
	Leader int32
	Cause  error
}

func (e NotLeaderError) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("quorum: not the leader (leader %d): %v", e.Leader, e.Cause)
	}
	return fmt.Sprintf("quorum: not the leader (leader %d)", e.Leader)
}

// Unwrap makes errors.Is(err, ErrNotLeader) hold, and errors.Is for the cause.
func (e NotLeaderError) Unwrap() []error {
	if e.Cause != nil {
		return []error{ErrNotLeader, e.Cause}
	}
	return []error{ErrNotLeader}
}

// Causes of a NotLeaderError from a leader.
var (
	// ErrLeaderNotReady: a new leader has not yet applied the entries of
	// earlier terms (its first entry of its own term is not applied), so
	// an operation computed on its image may contradict them.
	ErrLeaderNotReady = errors.New("quorum: leader has not applied the log of earlier terms yet")
	// ErrStaleImage: entries were applied after the operation read its
	// image, so its records were computed on an outdated state.
	ErrStaleImage = errors.New("quorum: the operation read an image older than the applied log")
)

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

// Options configure a Driver or a Voter.
type Options struct {
	// NodeID is this voter's node.id.
	NodeID int32
	// Voters are the node ids of controller.quorum.voters (static).
	Voters []int32
	// Dynamic: the voter set lives in the log (KIP-853,
	// controller.quorum.bootstrap.servers; kraft.version 1) and Voters is
	// unused. Bootstrap, on a new log, holds the initial voters (storage
	// format --standalone or --initial-controllers); none for a controller
	// that joins an existing quorum (--no-initial-controllers).
	// OnMembership is called on the voter's loop with each applied
	// membership (the transport learns its peers from it).
	Dynamic      bool
	Bootstrap    []Member
	OnMembership func(Membership)
	// ElectionTimeout is controller.quorum.election.timeout.ms (default 1s),
	// FetchTimeout controller.quorum.fetch.timeout.ms (default 2s) and
	// ElectionBackoffMax controller.quorum.election.backoff.max.ms (default
	// 1s); Timing documents how they map onto Raft ticks.
	ElectionTimeout    time.Duration
	FetchTimeout       time.Duration
	ElectionBackoffMax time.Duration
	// TickInterval is the Raft tick (default 100ms).
	TickInterval time.Duration
	// FS and Dir locate the quorum-state file (the metadata log directory).
	FS  vfs.FS
	Dir string
	// Store holds the entries durably; the caller closes it after Stop.
	Store EntryStore
	// Transport sends messages to other voters; nil for a single voter.
	Transport Transport
	// Apply is the state machine: called on the voter's loop for every
	// committed entry with data, in log order, exactly once per start (the
	// log after the latest snapshot is replayed after a restart). An error
	// stops the voter.
	Apply func(Committed) error
	// Snapshots turns snapshots and log compaction on; nil keeps the whole
	// log and replays all of it at start-up.
	Snapshots *SnapshotOptions
	// Logger receives the voter's and Raft's logs.
	Logger *slog.Logger
	// Clock drives the Driver's ticks; nil is the real clock.
	Clock clock.Clock
}

func (o Options) timing() Timing {
	return Timing{TickInterval: o.TickInterval, ElectionTimeout: o.ElectionTimeout, FetchTimeout: o.FetchTimeout, ElectionBackoffMax: o.ElectionBackoffMax}.withDefaults()
}

func (o Options) withDefaults() (Options, error) {
	t := o.timing()
	o.TickInterval, o.ElectionTimeout, o.FetchTimeout, o.ElectionBackoffMax = t.TickInterval, t.ElectionTimeout, t.FetchTimeout, t.ElectionBackoffMax
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Store == nil || o.Apply == nil || o.FS == nil {
		return o, errors.New("quorum: Options need Store, Apply and FS")
	}
	if len(o.Voters) > 1 && o.Transport == nil {
		return o, errors.New("quorum: several voters need a Transport")
	}
	if sn := o.Snapshots; sn != nil {
		if sn.Store == nil || sn.Take == nil || sn.Restore == nil || sn.Clock == nil {
			return o, errors.New("quorum: SnapshotOptions need Store, Take, Restore and Clock")
		}
		c := *sn
		if c.MaxBytesBetween <= 0 {
			c.MaxBytesBetween = 20 << 20
		}
		if c.MaxInterval <= 0 {
			c.MaxInterval = time.Hour
		}
		o.Snapshots = &c
	}
	return o, nil
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
	// LogStartOffset is the first offset still in the log behind snapshots.
	LogStartOffset int64
	// Replicas is, on the leader only, each voter's replication progress
	// (DescribeQuorum's voter states), in node id order.
	Replicas []ReplicaProgress
	// State is Kafka's name of this node's role (StateLeader ...); Vote
	// is Kafka's current-vote (-1: none).
	State string
	Vote  int32
	// LogEndOffset is the offset after the last entry of this node's log
	// (an observer's: the last it fetched); LogEndEpoch is that entry's
	// epoch.
	LogEndOffset int64
	LogEndEpoch  int32
	// Dynamic quorums: the membership applied (voters and learners).
	Dynamic bool
	Members []Member
}

// sameView reports whether two statuses agree on everything but the
// leader's replica progress.
func (s Status) sameView(o Status) bool {
	return s.Leader == o.Leader && s.Epoch == o.Epoch && s.IsLeader == o.IsLeader && s.CommitOffset == o.CommitOffset &&
		s.AppliedOffset == o.AppliedOffset && s.LogStartOffset == o.LogStartOffset && len(s.Members) == len(o.Members)
}

// ReplicaProgress is what the leader knows of one voter's log.
type ReplicaProgress struct {
	NodeID int32
	// EndOffset is the voter's log end offset as far as the leader knows
	// (the offset after the last entry it acknowledged).
	EndOffset int64
	// RecentActive says the leader heard from the voter within the last
	// election timeout.
	RecentActive bool
	// Learner: a voter being added that is still catching up.
	Learner bool
}

type proposeResult struct {
	offset int64
	err    error
}

type proposal struct {
	data []byte
	// after, when set, is the offset of the image the records were
	// computed on (ProposeAfter).
	after *int64
	done  chan proposeResult // buffered: the loop never blocks on it
}

// peerReport is a transport's news about a peer, for Raft.
type peerReport struct {
	nodeID       int32
	snapshot     bool // a snapshot report, else unreachable
	snapshotFail bool
}

// Driver runs one Voter on a loop goroutine, started by Start and ended by
// Stop, which owns the voter: ticks from a real ticker, messages from the
// transport, proposals from callers.
type Driver struct {
	opts  Options
	log   *slog.Logger
	voter *Voter

	recvc    chan *raftpb.Message
	reportc  chan peerReport
	propc    chan proposal
	opc      chan func(*Voter)
	stopc    chan struct{}
	donec    chan struct{}
	replayed chan struct{}

	startOnce sync.Once
	stopOnce  sync.Once
	status    atomic.Pointer[Status]
	failure   atomic.Pointer[error]
	// isReplayed is loop-only.
	isReplayed bool
	// changed is closed and replaced when the status changes
	// (StatusChanged); guarded by changedMu.
	changedMu sync.Mutex
	changed   chan struct{}
}

// inboxSize bounds queued incoming messages; beyond it they are dropped,
// which Raft tolerates.
const inboxSize = 4096

// New loads the hard state, the latest snapshot and the entries and builds
// the voter. The committed entries after the snapshot are handed to Apply
// again once the driver starts.
func New(opts Options) (*Driver, error) {
	v, err := NewVoter(opts)
	if err != nil {
		return nil, err
	}
	d := &Driver{
		opts: v.opts, log: v.log, voter: v,
		recvc: make(chan *raftpb.Message, inboxSize), reportc: make(chan peerReport, inboxSize), propc: make(chan proposal), opc: make(chan func(*Voter)),
		stopc: make(chan struct{}), donec: make(chan struct{}), replayed: make(chan struct{}),
		changed: make(chan struct{}),
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

// Done is closed once the loop has ended: after Stop, or when a failure
// (Err) stopped the voter. A driver never started is done after Stop.
func (d *Driver) Done() <-chan struct{} { return d.donec }

// StatusChanged returns a channel closed the next time the status changes
// (leader, epoch, commit, applied or log start offset), so waiters on new
// committed entries or a leader change need not poll (they also watch
// Done).
func (d *Driver) StatusChanged() <-chan struct{} {
	d.changedMu.Lock()
	defer d.changedMu.Unlock()
	return d.changed
}

// Replayed is closed once every entry committed before the start has been
// applied: the state machine then reflects at least what was on disk.
func (d *Driver) Replayed() <-chan struct{} { return d.replayed }

// Status returns the voter's latest view.
func (d *Driver) Status() Status { return *d.status.Load() }

// TickInterval is the Raft tick the driver runs on.
func (d *Driver) TickInterval() time.Duration { return d.opts.TickInterval }

// Latencies are the voter's commit and election latencies.
func (d *Driver) Latencies() *RaftLatencies { return d.voter.latencies }

// Step hands the driver a message from another voter. It never blocks: when
// the inbox is full the message is dropped. Messages not addressed to this
// voter and proposals (only the local leader proposes) are dropped too.
func (d *Driver) Step(msg *raftpb.Message) {
	if msg.GetTo() != RaftID(d.opts.NodeID) || msg.GetType() == raftpb.MsgProp {
		d.log.Debug("raft message refused", "type", msg.GetType().String(), "from", NodeID(msg.GetFrom()), "to", NodeID(msg.GetTo()))
		return
	}
	select {
	case d.recvc <- msg:
	default:
		d.log.Debug("raft inbox full, message dropped", "type", msg.GetType().String(), "from", NodeID(msg.GetFrom()))
	}
}

// ReportUnreachable tells Raft (on the loop) that a peer could not be reached.
func (d *Driver) ReportUnreachable(nodeID int32) { d.report(peerReport{nodeID: nodeID}) }

// ReportSnapshot tells Raft (on the loop) whether a snapshot reached a peer.
func (d *Driver) ReportSnapshot(nodeID int32, failed bool) {
	d.report(peerReport{nodeID: nodeID, snapshot: true, snapshotFail: failed})
}

func (d *Driver) report(r peerReport) {
	select {
	case d.reportc <- r:
	default:
		d.log.Debug("raft report queue full, report dropped", "peer", r.nodeID)
	}
}

// Propose appends data to the log through Raft and returns once the entry
// is committed and applied, with its offset. On a voter that is not the
// leader it fails at once with a NotLeaderError.
func (d *Driver) Propose(ctx context.Context, data []byte) (int64, error) {
	return d.propose(ctx, proposal{data: data, done: make(chan proposeResult, 1)})
}

// ProposeAfter is Propose for records computed on the image at imageOffset
// (the offset of the last record applied to it): it fails with a
// NotLeaderError whose cause is ErrLeaderNotReady or ErrStaleImage unless
// this voter leads, has applied every entry of earlier terms, and has
// applied nothing since that image. Operations computed on an image then
// never contradict records committed before them.
func (d *Driver) ProposeAfter(ctx context.Context, data []byte, imageOffset int64) (int64, error) {
	return d.propose(ctx, proposal{data: data, after: &imageOffset, done: make(chan proposeResult, 1)})
}

func (d *Driver) propose(ctx context.Context, p proposal) (int64, error) {
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
	ticker := d.opts.Clock.NewTicker(d.opts.TickInterval)
	defer ticker.Stop()
	if len(d.opts.Voters) == 1 && d.opts.Voters[0] == d.opts.NodeID {
		// A lone voter need not wait out an election timeout.
		if err := d.voter.Campaign(); err != nil {
			d.log.Warn("campaign failed", "err", err)
		}
	}
	campaigned := false
	for {
		if err := d.voter.Process(); err != nil {
			d.failure.Store(&err)
			d.log.Error("quorum driver stopped", "err", err)
			d.publishStatus()
			return
		}
		if d.opts.Dynamic && !campaigned && d.voter.soleVoter() {
			// A lone dynamic voter learns it is alone only once its log
			// is replayed.
			campaigned = true
			if err := d.voter.Campaign(); err != nil {
				d.log.Warn("campaign failed", "err", err)
			}
			continue
		}
		d.publishStatus()
		select {
		case <-d.stopc:
			d.voter.FailPending(ErrStopped)
			return
		case <-ticker.C():
			d.voter.Tick()
		case m := <-d.recvc:
			if err := d.voter.Step(m); err != nil {
				d.log.Debug("raft refused a message", "type", m.GetType().String(), "from", NodeID(m.GetFrom()), "err", err)
			}
		case r := <-d.reportc:
			if r.snapshot {
				d.voter.ReportSnapshot(r.nodeID, r.snapshotFail)
			} else {
				d.voter.ReportUnreachable(r.nodeID)
			}
		case op := <-d.opc:
			op(d.voter)
		case p := <-d.propc:
			done := p.done
			reply := func(offset int64, err error) { done <- proposeResult{offset: offset, err: err} }
			if p.after != nil {
				d.voter.ProposeAfter(p.data, *p.after, reply)
			} else {
				d.voter.Propose(p.data, reply)
			}
		}
	}
}

func (d *Driver) publishStatus() {
	st := d.voter.Status()
	prev := d.status.Swap(&st)
	if prev == nil || !prev.sameView(st) {
		d.changedMu.Lock()
		close(d.changed)
		d.changed = make(chan struct{})
		d.changedMu.Unlock()
	}
	if !d.isReplayed && d.voter.Replayed() {
		d.isReplayed = true
		close(d.replayed)
	}
}
