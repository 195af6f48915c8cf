package sharefetch

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/broker/sharepersist"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/replication"
	"github.com/sluice-io/sluice/internal/share"
)

// sharePart is one share partition this broker leads: its state machine
// and the queue of its state writes.
type sharePart struct {
	key   sharepersist.Key
	tp    kafka.TopicPartition
	epoch int32 // the leader epoch it was loaded at

	// load is done once; p is set by it, or loadErr.
	load    sync.Once
	loadErr error

	mu sync.Mutex
	p  *share.Partition
	// queue holds the writes not yet sent, in the order the state machine
	// made them; writing is set while a goroutine drains it.
	queue   []*queuedWrite
	writing bool
}

// queuedWrite is one state write and the channel its outcome goes to.
type queuedWrite struct {
	w    *share.Write
	done chan error
}

// partition returns the share partition of group and tp, loading it from
// the share coordinator the first time; errors carry Kafka's codes
// (NOT_LEADER_OR_FOLLOWER when this broker does not lead tp,
// UNKNOWN_TOPIC_OR_PARTITION when the topic is gone).
func (m *Manager) partition(ctx context.Context, group string, tip share.TopicIDPartition) (*sharePart, error) {
	im := m.opts.Image()
	t, ok := im.TopicByID(tip.TopicID)
	if !ok {
		return nil, kerr.UnknownTopicID
	}
	tp := kafka.TopicPartition{Topic: t.Name, Partition: tip.Partition}
	st, ok := t.Partitions[tip.Partition]
	if !ok {
		return nil, kerr.UnknownTopicOrPartition
	}
	if st.Leader != m.opts.NodeID {
		return nil, kerr.NotLeaderForPartition
	}
	k := partKey{group, tip}
	m.mu.Lock()
	sp, ok := m.parts[k]
	if !ok || sp.epoch != st.LeaderEpoch {
		// A new leader epoch reloads: the share coordinator fences the
		// writes of the older one.
		sp = &sharePart{key: sharepersist.Key{GroupID: group, TopicID: tip.TopicID, Partition: tip.Partition}, tp: tp, epoch: st.LeaderEpoch}
		m.parts[k] = sp
	}
	m.mu.Unlock()
	sp.load.Do(func() { sp.loadErr = m.loadPartition(ctx, sp) })
	if sp.loadErr != nil {
		m.forget(k, sp)
		return nil, sp.loadErr
	}
	return sp, nil
}

// forget drops sp if it is still the share partition held for k, so the
// next use loads it again.
func (m *Manager) forget(k partKey, sp *sharePart) {
	m.mu.Lock()
	if m.parts[k] == sp {
		delete(m.parts, k)
	}
	m.mu.Unlock()
}

// loadPartition reads sp's state from the share coordinator (Kafka's
// SharePartition.maybeInitialize) and resolves share.auto.offset.reset
// when none was recorded.
func (m *Manager) loadPartition(ctx context.Context, sp *sharePart) error {
	st, err := m.opts.Persister.Read(ctx, sp.key, sp.epoch)
	if err != nil {
		return fmt.Errorf("read share state of %s: %w", sp.key.CoordinatorKey(), persisterError(err))
	}
	gs := m.opts.Group(sp.key.GroupID)
	reset := int64(-1)
	if st.StartOffset == share.UninitializedStartOffset {
		if reset, err = m.resetOffset(sp.tp, gs.AutoOffsetReset); err != nil {
			return err
		}
	}
	ps := share.PersistedState{StateEpoch: st.StateEpoch, StartOffset: st.StartOffset}
	for _, b := range st.Batches {
		ps.Batches = append(ps.Batches, share.StateBatch{FirstOffset: b.FirstOffset, LastOffset: b.LastOffset,
			DeliveryState: share.RecordState(b.DeliveryState), DeliveryCount: b.DeliveryCount})
	}
	p, err := share.NewPartition(gs.Partition, sp.epoch, ps, reset)
	if err != nil {
		return fmt.Errorf("load share partition %s: %w", sp.key.CoordinatorKey(), err)
	}
	sp.mu.Lock()
	sp.p = p
	sp.mu.Unlock()
	return nil
}

// persisterError is the error a client sees for a failed state read or
// write: the coordinator's code mapped as Kafka maps it, and anything else
// (a deadline, an unreachable coordinator) as COORDINATOR_NOT_AVAILABLE.
func persisterError(err error) error {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return fmt.Errorf("%v: %w", err, share.PersisterError(ke.Code))
	}
	return fmt.Errorf("%v: %w", err, kerr.CoordinatorNotAvailable)
}

// resetOffset is the offset share.auto.offset.reset names in tp's log.
func (m *Manager) resetOffset(tp kafka.TopicPartition, policy config.ShareAutoOffsetReset) (int64, error) {
	ts := kafka.ListOffsetsLatest
	switch policy.Strategy {
	case config.ResetEarliest:
		ts = kafka.ListOffsetsEarliest
	case config.ResetByDuration:
		ts = m.opts.Clock.Now().Add(-policy.Duration).UnixMilli()
	}
	a, err := m.opts.Log.ListOffset(tp, ts, replication.IsolationHighWatermark, -1, true)
	if err != nil {
		return 0, err
	}
	if a.Offset < 0 {
		// No record at or after the time: start at the end, as Kafka.
		if a, err = m.opts.Log.ListOffset(tp, kafka.ListOffsetsLatest, replication.IsolationHighWatermark, -1, true); err != nil {
			return 0, err
		}
	}
	return a.Offset, nil
}

// enqueueLocked queues w behind sp's earlier writes and starts the drain;
// sp.mu is held. The returned channel gets the write's outcome.
func (sp *sharePart) enqueueLocked(m *Manager, w *share.Write) <-chan error {
	q := &queuedWrite{w: w, done: make(chan error, 1)}
	sp.queue = append(sp.queue, q)
	if !sp.writing {
		sp.writing = true
		go sp.drain(m)
	}
	return q.done
}

// drain sends sp's queued writes one at a time, in order, and reports each
// outcome to the state machine; it ends when the queue is empty.
func (sp *sharePart) drain(m *Manager) {
	for {
		sp.mu.Lock()
		if len(sp.queue) == 0 {
			sp.writing = false
			sp.mu.Unlock()
			return
		}
		q := sp.queue[0]
		sp.queue = sp.queue[1:]
		sp.mu.Unlock()

		ctx, cancel := context.WithTimeout(m.ctx, m.opts.WriteTimeout)
		err := m.opts.Persister.Write(ctx, sp.key, toPersisted(q.w))
		cancel()
		if err != nil {
			m.opts.Logger.Warn("share state write failed", "share_partition", sp.key.CoordinatorKey(), "err", err)
			err = persisterError(err)
		}
		sp.mu.Lock()
		changed, derr := sp.p.WriteDone(q.w.ID, err, m.opts.Clock.Now())
		sp.mu.Unlock()
		if derr != nil {
			m.opts.Logger.Error("share state write outcome", "share_partition", sp.key.CoordinatorKey(), "err", derr)
		}
		q.done <- err
		if changed || err != nil {
			m.notify()
		}
	}
}

// toPersisted is w as the persister sends it.
func toPersisted(w *share.Write) sharepersist.Write {
	out := sharepersist.Write{StateEpoch: w.StateEpoch, LeaderEpoch: w.LeaderEpoch, StartOffset: w.StartOffset,
		DeliveryCompleteCount: w.DeliveryCompleteCount}
	for _, b := range w.Batches {
		out.Batches = append(out.Batches, sharepersist.StateBatch{FirstOffset: b.FirstOffset, LastOffset: b.LastOffset,
			DeliveryState: int8(b.DeliveryState), DeliveryCount: b.DeliveryCount})
	}
	return out
}
