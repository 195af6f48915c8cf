package quorum

// A dedicated broker is not a raft member: its Observer pulls the committed
// metadata log from the active controller with Fetch on
// __cluster_metadata-0 (replica id -1) and hands each entry to Apply, as a
// KRaft broker's observer does. It keeps nothing of the log on disk: a
// restart pulls it again from the controllers, from their newest snapshot
// when their log has been compacted behind one (observer_snapshot.go).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/transport"
)

// MetadataTopic is the name of the metadata log.
const MetadataTopic = "__cluster_metadata"

// ObserverOptions configure an Observer.
type ObserverOptions struct {
	// NodeID is this broker's node.id.
	NodeID int32
	// Voters maps each voter's id to its CONTROLLER address.
	Voters map[int32]string
	// A dynamic quorum's observer (observer_dynamic.go) starts from
	// Bootstrap (controller.quorum.bootstrap.servers) and learns the
	// voters' Listener addresses from the membership in the log it
	// fetches; OnMembership gets each one.
	Bootstrap    []string
	Listener     string
	OnMembership func(Membership)
	// Peers carries the fetches.
	Peers *transport.Pool
	// Apply is called for every committed entry with data, in log order;
	// an error stops the observer (Err).
	Apply func(Committed) error
	// Restore replaces the state with a snapshot's (offset is the last
	// entry it covers).
	Restore func(offset int64, epoch int32, data []byte) error
	// FetchTimeout (controller.quorum.fetch.timeout.ms) bounds one fetch: a
	// controller that stopped answering keeps its connection open, and the
	// observer must move on to find the new leader. At least a second,
	// above the fetch's own 500 ms wait.
	FetchTimeout time.Duration
	// SnapshotChunk is the most one FetchSnapshot asks for (0: 1 MiB).
	SnapshotChunk int32
	// Clock drives the retry backoff; nil is the real clock.
	Clock  clock.Clock
	Logger *slog.Logger
}

// Observer runs the fetch loop; Start and Stop own its goroutine.
type Observer struct {
	opts ObserverOptions
	log  *slog.Logger

	mu       sync.Mutex
	leader   int32 // -1 unknown
	epoch    int64
	hw       int64 // the controller's high watermark at the last fetch
	next     int64 // the offset to fetch from: one past the last entry seen
	err      error // why the loop stopped (a bad entry), or nil
	caughtUp chan struct{}
	caught   bool
	// changed is closed and replaced when Status changes.
	changed chan struct{}
	// nextEpoch is the epoch of the entry before next (0: none).
	nextEpoch int32
	// addrs are the controllers to fetch from: Voters, or a dynamic
	// quorum's bootstrap servers (ids -1, -2, ...) and applied voters.
	addrs map[int32]string

	startOnce sync.Once
	stopOnce  sync.Once
	stopc     chan struct{}
	donec     chan struct{}
}

// NewObserver returns an observer that has fetched nothing yet.
func NewObserver(opts ObserverOptions) *Observer {
	opts.FetchTimeout = max(opts.FetchTimeout, time.Second)
	if opts.SnapshotChunk <= 0 {
		opts.SnapshotChunk = snapshotChunkBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	return &Observer{
		opts: opts, log: opts.Logger.With("component", "metadata-observer"),
		leader: -1, caughtUp: make(chan struct{}), changed: make(chan struct{}),
		stopc: make(chan struct{}), donec: make(chan struct{}), addrs: initialAddrs(opts),
	}
}

// Status is the observer's view of the quorum, shaped as a voter's.
func (o *Observer) Status() Status {
	o.mu.Lock()
	defer o.mu.Unlock()
	return Status{NodeID: o.opts.NodeID, Leader: o.leader, Epoch: o.epoch, CommitOffset: o.hw - 1, AppliedOffset: o.next - 1,
		State: observerState(o.leader), Vote: -1, LogEndOffset: o.next, LogEndEpoch: o.nextEpoch}
}

// StatusChanged returns a channel closed the next time Status changes.
func (o *Observer) StatusChanged() <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.changed
}

// notifyLocked wakes StatusChanged's waiters; o.mu is held.
func (o *Observer) notifyLocked() {
	close(o.changed)
	o.changed = make(chan struct{})
}

// Err is why the observer stopped, or nil.
func (o *Observer) Err() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// CaughtUp is closed once the observer has reached the controller's high
// watermark once.
func (o *Observer) CaughtUp() <-chan struct{} { return o.caughtUp }

// Done is closed once the loop has ended: after Stop, or when an entry it
// could not apply stopped it (Err).
func (o *Observer) Done() <-chan struct{} { return o.donec }

// Start starts the fetch loop.
func (o *Observer) Start() {
	o.startOnce.Do(func() {
		go func() {
			defer close(o.donec)
			o.run()
		}()
	})
}

// Stop ends the loop and waits for it.
func (o *Observer) Stop() {
	o.startOnce.Do(func() { close(o.donec) }) // never started
	o.stopOnce.Do(func() { close(o.stopc) })
	<-o.donec
}

func (o *Observer) run() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-o.stopc:
			cancel()
		case <-ctx.Done():
		}
	}()
	next := 0
	backoff := o.opts.Clock.NewTimer(0)
	defer backoff.Stop()
	for {
		target := o.currentLeader()
		if _, known := o.addr(target); target < 0 || !known {
			ids := o.targets()
			target = ids[next%len(ids)]
			next++
		}
		err := o.fetchOnce(ctx, target)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			continue
		}
		var bad badEntryError
		if errors.As(err, &bad) {
			o.mu.Lock()
			o.err = err
			o.mu.Unlock()
			o.log.Error("metadata entry from the controller cannot be applied; observer stopped", "err", err)
			return
		}
		o.log.Debug("metadata fetch failed", "controller", target, "err", err)
		backoff.Reset(100 * time.Millisecond)
		select {
		case <-ctx.Done():
			return
		case <-backoff.C():
		}
	}
}

func (o *Observer) currentLeader() int32 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.leader
}

func (o *Observer) nextOffset() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.next
}

// badEntryError is an entry Apply refused: the observer cannot skip it.
type badEntryError struct{ err error }

func (e badEntryError) Error() string { return e.err.Error() }

// fetchOnce sends one Fetch to controller target and applies what it got.
func (o *Observer) fetchOnce(ctx context.Context, target int32) error {
	addr, ok := o.addr(target)
	if !ok {
		o.setLeader(-1, 0)
		return fmt.Errorf("controller %d is not a voter", target)
	}
	req := metadataFetchRequest(o.nextOffset())
	fctx, cancel := context.WithTimeout(ctx, o.opts.FetchTimeout)
	defer cancel()
	resp, err := o.opts.Peers.Request(fctx, addr, req)
	if err != nil {
		o.setLeader(-1, 0)
		return fmt.Errorf("fetch metadata from controller %d: %w", target, err)
	}
	fr, ok := resp.(*kmsg.FetchResponse)
	if !ok || len(fr.Topics) != 1 || len(fr.Topics[0].Partitions) != 1 {
		return fmt.Errorf("controller %d answered a metadata fetch with %T", target, resp)
	}
	rp := fr.Topics[0].Partitions[0]
	switch rp.ErrorCode {
	case 0:
	case kerr.NotLeaderForPartition.Code:
		o.setLeader(rp.CurrentLeader.LeaderID, int64(rp.CurrentLeader.LeaderEpoch))
		return fmt.Errorf("controller %d is not the leader (leader %d)", target, rp.CurrentLeader.LeaderID)
	default:
		return fmt.Errorf("metadata fetch from controller %d: %w", target, kerr.ErrorForCode(rp.ErrorCode))
	}
	o.setLeader(target, int64(rp.CurrentLeader.LeaderEpoch))
	if rp.SnapshotID.EndOffset >= 0 && rp.SnapshotID.Epoch >= 0 {
		// Behind the controller's log start: its snapshot first.
		return o.loadSnapshot(ctx, addr, target, SnapshotID{EndOffset: rp.SnapshotID.EndOffset, Epoch: rp.SnapshotID.Epoch})
	}
	if err := o.apply(rp.RecordBatches, rp.HighWatermark); err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.hw != rp.HighWatermark {
		o.hw = rp.HighWatermark
		o.notifyLocked()
	}
	if !o.caught && o.next >= rp.HighWatermark {
		o.caught = true
		close(o.caughtUp)
	}
	return nil
}

// metadataFetchRequest is an observer's Fetch of __cluster_metadata-0 from
// offset: replica id -1, no session.
func metadataFetchRequest(offset int64) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.ReplicaState.ID = -1
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 500, 1, 8<<20
	req.SessionEpoch = -1
	t := kmsg.NewFetchRequestTopic()
	t.Topic, t.TopicID = MetadataTopic, kafka.MetadataTopicID()
	p := kmsg.NewFetchRequestTopicPartition()
	p.FetchOffset = offset
	p.PartitionMaxBytes = 8 << 20
	p.CurrentLeaderEpoch, p.LastFetchedEpoch, p.LogStartOffset = -1, -1, -1
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

// apply replays the fetched batches below the high watermark, one raft
// entry each; entries without data (a new leader's empty entry,
// configuration changes) only move the position.
func (o *Observer) apply(batches []byte, hw int64) error {
	_, err := records.Batches(batches, func(h records.Header, batch []byte) error {
		next := o.nextOffset()
		if h.BaseOffset < next || h.BaseOffset >= hw {
			return nil
		}
		if h.BaseOffset != next {
			return fmt.Errorf("metadata batch at %d, expected %d", h.BaseOffset, next)
		}
		e, err := batchToEntry(h, batch)
		if err != nil {
			return err
		}
		if e.GetType() == raftpb.EntryNormal && len(e.GetData()) > 0 {
			c := Committed{Offset: h.BaseOffset, Epoch: h.PartitionLeaderEpoch, Data: e.GetData()}
			if err := o.opts.Apply(c); err != nil {
				return badEntryError{err: err}
			}
		}
		if err := o.applyConf(e); err != nil {
			return err
		}
		o.mu.Lock()
		o.next, o.nextEpoch = h.BaseOffset+1, h.PartitionLeaderEpoch
		o.notifyLocked()
		o.mu.Unlock()
		return nil
	})
	return err
}

func (o *Observer) setLeader(id int32, epoch int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if id == o.leader && (id < 0 || epoch == o.epoch) {
		return
	}
	o.leader = id
	if id >= 0 {
		o.epoch = epoch
	}
	o.notifyLocked()
}

// View is a node's view of the metadata quorum: a voter's Driver or a
// dedicated broker's Observer.
type View interface {
	Status() Status
	// StatusChanged is closed the next time Status changes.
	StatusChanged() <-chan struct{}
	// Done is closed once the view has stopped; Err says why.
	Done() <-chan struct{}
	Err() error
}

var (
	_ View = (*Driver)(nil)
	_ View = (*Observer)(nil)
)
