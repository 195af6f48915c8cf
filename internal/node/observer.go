package node

// A dedicated broker is not a raft member: it pulls the committed metadata
// log from the active controller with Fetch on __cluster_metadata-0
// (replica id -1, an observer) and replays it into its metadata.Loader, as
// a KRaft broker does. It keeps nothing of the log on disk: a restart pulls
// it again from the controllers, from their newest snapshot when their log
// has been compacted behind one (observer_snapshot.go).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/internal/controller"
	"sluice/internal/metadata"
	"sluice/internal/quorum"
	"sluice/internal/records"
)

// metadataObserver runs the fetch loop; start and stop own its goroutine.
type metadataObserver struct {
	nodeID int32
	voters map[int32]string
	loader *metadata.Loader
	log    *slog.Logger
	// fetchTimeout (controller.quorum.fetch.timeout.ms) bounds one fetch:
	// a controller that stopped answering keeps its connection open, and
	// the observer must move on to find the new leader. At least a second,
	// above the fetch's own 500 ms wait.
	fetchTimeout time.Duration
	// snapshotChunk is the most one FetchSnapshot asks for.
	snapshotChunk int32

	mu       sync.Mutex
	leader   int32 // -1 unknown
	epoch    int64
	hw       int64 // the controller's high watermark at the last fetch
	err      error // why the loop stopped (a bad entry), or nil
	clients  map[string]*kgo.Client
	caughtUp chan struct{} // closed once the image reached a high watermark
	caught   bool

	stopc chan struct{}
	donec chan struct{}
}

func newMetadataObserver(nodeID int32, voters map[int32]string, loader *metadata.Loader, fetchTimeout time.Duration, log *slog.Logger) *metadataObserver {
	return &metadataObserver{
		nodeID: nodeID, voters: voters, loader: loader, log: log.With("component", "metadata-observer"),
		fetchTimeout:  max(fetchTimeout, time.Second),
		snapshotChunk: snapshotChunkBytes,
		leader:        -1, clients: map[string]*kgo.Client{}, caughtUp: make(chan struct{}),
		stopc: make(chan struct{}), donec: make(chan struct{}),
	}
}

// Status is the observer's view of the quorum, shaped as a voter's.
func (o *metadataObserver) Status() quorum.Status {
	o.mu.Lock()
	defer o.mu.Unlock()
	off := o.loader.Image().Offset()
	return quorum.Status{NodeID: o.nodeID, Leader: o.leader, Epoch: o.epoch, CommitOffset: o.hw - 1, AppliedOffset: off}
}

// Err is why the observer stopped, or nil.
func (o *metadataObserver) Err() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// CaughtUp is closed once the image has reached the controller's high
// watermark once.
func (o *metadataObserver) CaughtUp() <-chan struct{} { return o.caughtUp }

func (o *metadataObserver) start() {
	go func() {
		defer close(o.donec)
		o.run()
	}()
}

func (o *metadataObserver) stop() {
	select {
	case <-o.stopc:
	default:
		close(o.stopc)
	}
	<-o.donec
	o.mu.Lock()
	defer o.mu.Unlock()
	for addr, cl := range o.clients {
		cl.Close()
		delete(o.clients, addr)
	}
}

func (o *metadataObserver) run() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-o.stopc:
			cancel()
		case <-ctx.Done():
		}
	}()
	ids := sortedVoterIDs(o.voters)
	next := 0
	backoff := time.NewTimer(0)
	defer backoff.Stop()
	for {
		target := o.currentLeader()
		if target < 0 {
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
		case <-backoff.C:
		}
	}
}

func (o *metadataObserver) currentLeader() int32 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.leader
}

// badEntryError is an entry the loader refused: the observer cannot skip it.
type badEntryError struct{ err error }

func (e badEntryError) Error() string { return e.err.Error() }

// fetchOnce sends one Fetch to controller target and applies what it got.
func (o *metadataObserver) fetchOnce(ctx context.Context, target int32) error {
	addr, ok := o.voters[target]
	if !ok {
		o.setLeader(-1, 0)
		return fmt.Errorf("controller %d is not a voter", target)
	}
	cl, err := o.client(addr)
	if err != nil {
		return err
	}
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.ReplicaState.ID = -1
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 500, 1, 8<<20
	req.SessionEpoch = -1
	t := kmsg.NewFetchRequestTopic()
	t.Topic, t.TopicID = controller.MetadataTopic, metadataTopicID
	p := kmsg.NewFetchRequestTopicPartition()
	p.FetchOffset = o.loader.Image().Offset() + 1
	p.PartitionMaxBytes = 8 << 20
	p.CurrentLeaderEpoch, p.LastFetchedEpoch, p.LogStartOffset = -1, -1, -1
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	fctx, cancel := context.WithTimeout(ctx, o.fetchTimeout)
	defer cancel()
	resp, err := cl.SeedBrokers()[0].Request(fctx, req)
	if err != nil {
		o.setLeader(-1, 0)
		return fmt.Errorf("fetch metadata from controller %d: %w", target, err)
	}
	fr := resp.(*kmsg.FetchResponse)
	if len(fr.Topics) != 1 || len(fr.Topics[0].Partitions) != 1 {
		return fmt.Errorf("controller %d answered a metadata fetch with %d topics (error %d)", target, len(fr.Topics), fr.ErrorCode)
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
		return o.loadSnapshot(ctx, cl, target, quorum.SnapshotID{EndOffset: rp.SnapshotID.EndOffset, Epoch: rp.SnapshotID.Epoch})
	}
	if err := o.apply(rp.RecordBatches, rp.HighWatermark); err != nil {
		return err
	}
	o.mu.Lock()
	o.hw = rp.HighWatermark
	if !o.caught && o.loader.Image().Offset()+1 >= rp.HighWatermark {
		o.caught = true
		close(o.caughtUp)
	}
	o.mu.Unlock()
	return nil
}

// apply replays the fetched batches below the high watermark.
func (o *metadataObserver) apply(batches []byte, hw int64) error {
	_, err := records.Batches(batches, func(h records.Header, batch []byte) error {
		if h.BaseOffset <= o.loader.Image().Offset() || h.BaseOffset >= hw {
			return nil
		}
		if err := records.CheckCRC(batch); err != nil {
			return fmt.Errorf("metadata batch at %d: %w", h.BaseOffset, err)
		}
		return records.ForEachRecord(batch, func(r records.Record) error {
			if err := o.loader.Apply(h.BaseOffset, h.PartitionLeaderEpoch, r.Value); err != nil {
				return badEntryError{err: err}
			}
			return nil
		})
	})
	return err
}

func (o *metadataObserver) setLeader(id int32, epoch int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.leader = id
	if id >= 0 {
		o.epoch = epoch
	}
}

func (o *metadataObserver) client(addr string) (*kgo.Client, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if cl, ok := o.clients[addr]; ok {
		return cl, nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID(fmt.Sprintf("sluice-observer-%d", o.nodeID)))
	if err != nil {
		return nil, fmt.Errorf("metadata client for %s: %w", addr, err)
	}
	o.clients[addr] = cl
	return cl, nil
}
