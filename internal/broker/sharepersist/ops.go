package sharepersist

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Versions sent: the highest of the pinned release for each API, which
// every broker of that release serves.
const (
	initializeVersion = 0
	readVersion       = 0
	writeVersion      = 1
	deleteVersion     = 0
	summaryVersion    = 1
)

// StateBatch is a run of offsets with one delivery state and count (Kafka's
// PersisterStateBatch).
type StateBatch struct {
	FirstOffset   int64
	LastOffset    int64
	DeliveryState int8
	DeliveryCount int16
}

// State is a share partition's persisted state. StartOffset -1 means none
// was ever written (the partition starts at share.auto.offset.reset).
type State struct {
	StateEpoch  int32
	StartOffset int64
	Batches     []StateBatch
}

// Write is what a share partition's leader persists.
type Write struct {
	StateEpoch  int32
	LeaderEpoch int32
	StartOffset int64
	// DeliveryCompleteCount is how many in-flight records are acknowledged
	// or archived (WriteShareGroupState v1, for the lag of KIP-1226); -1
	// when unknown.
	DeliveryCompleteCount int32
	Batches               []StateBatch
}

// Summary is what ReadShareGroupStateSummary answers of a share partition.
type Summary struct {
	StateEpoch  int32
	LeaderEpoch int32
	StartOffset int64
	// DeliveryCompleteCount is -1 where the coordinator does not know it.
	DeliveryCompleteCount int32
}

// Read returns key's persisted state, fencing older leaders: the
// coordinator refuses a leaderEpoch below the one it last saw.
func (p *Persister) Read(ctx context.Context, key Key, leaderEpoch int32) (State, error) {
	req := kmsg.NewPtrReadShareGroupStateRequest()
	req.SetVersion(readVersion)
	req.GroupID = key.GroupID
	t := kmsg.NewReadShareGroupStateRequestTopic()
	t.TopicID = key.TopicID
	pt := kmsg.NewReadShareGroupStateRequestTopicPartition()
	pt.Partition, pt.LeaderEpoch = key.Partition, leaderEpoch
	t.Partitions = append(t.Partitions, pt)
	req.Topics = append(req.Topics, t)

	var st State
	_, err := p.do(ctx, key, req, func(r kmsg.Response) error {
		resp, ok := r.(*kmsg.ReadShareGroupStateResponse)
		if !ok {
			return errUnexpected(r)
		}
		for _, t := range resp.Topics {
			if t.TopicID != key.TopicID {
				continue
			}
			for _, pp := range t.Partitions {
				if pp.Partition != key.Partition {
					continue
				}
				if err := partitionError(pp.ErrorCode, pp.ErrorMessage); err != nil {
					return err
				}
				st = State{StateEpoch: pp.StateEpoch, StartOffset: pp.StartOffset}
				for _, b := range pp.StateBatches {
					st.Batches = append(st.Batches, StateBatch{b.FirstOffset, b.LastOffset, b.DeliveryState, b.DeliveryCount})
				}
				return nil
			}
		}
		return errMissing(key)
	})
	return st, err
}

// Write persists w for key.
func (p *Persister) Write(ctx context.Context, key Key, w Write) error {
	req := kmsg.NewPtrWriteShareGroupStateRequest()
	req.SetVersion(writeVersion)
	req.GroupID = key.GroupID
	t := kmsg.NewWriteShareGroupStateRequestTopic()
	t.TopicID = key.TopicID
	pt := kmsg.NewWriteShareGroupStateRequestTopicPartition()
	pt.Partition, pt.StateEpoch, pt.LeaderEpoch, pt.StartOffset = key.Partition, w.StateEpoch, w.LeaderEpoch, w.StartOffset
	pt.DeliveryCompleteCount = w.DeliveryCompleteCount
	for _, b := range w.Batches {
		sb := kmsg.NewWriteShareGroupStateRequestTopicPartitionStateBatch()
		sb.FirstOffset, sb.LastOffset, sb.DeliveryState, sb.DeliveryCount = b.FirstOffset, b.LastOffset, b.DeliveryState, b.DeliveryCount
		pt.StateBatches = append(pt.StateBatches, sb)
	}
	t.Partitions = append(t.Partitions, pt)
	req.Topics = append(req.Topics, t)

	_, err := p.do(ctx, key, req, func(r kmsg.Response) error {
		resp, ok := r.(*kmsg.WriteShareGroupStateResponse)
		if !ok {
			return errUnexpected(r)
		}
		for _, t := range resp.Topics {
			for _, pp := range t.Partitions {
				if t.TopicID == key.TopicID && pp.Partition == key.Partition {
					return partitionError(pp.ErrorCode, pp.ErrorMessage)
				}
			}
		}
		return errMissing(key)
	})
	return err
}

// Initialize sets key's state to start at startOffset with stateEpoch,
// dropping any in-flight state (the group coordinator's initialization of
// a share partition, and an offset reset).
func (p *Persister) Initialize(ctx context.Context, key Key, stateEpoch int32, startOffset int64) error {
	req := kmsg.NewPtrInitializeShareGroupStateRequest()
	req.SetVersion(initializeVersion)
	req.GroupID = key.GroupID
	t := kmsg.NewInitializeShareGroupStateRequestTopic()
	t.TopicID = key.TopicID
	pt := kmsg.NewInitializeShareGroupStateRequestTopicPartition()
	pt.Partition, pt.StateEpoch, pt.StartOffset = key.Partition, stateEpoch, startOffset
	t.Partitions = append(t.Partitions, pt)
	req.Topics = append(req.Topics, t)

	_, err := p.do(ctx, key, req, func(r kmsg.Response) error {
		resp, ok := r.(*kmsg.InitializeShareGroupStateResponse)
		if !ok {
			return errUnexpected(r)
		}
		for _, t := range resp.Topics {
			for _, pp := range t.Partitions {
				if t.TopicID == key.TopicID && pp.Partition == key.Partition {
					return partitionError(pp.ErrorCode, pp.ErrorMessage)
				}
			}
		}
		return errMissing(key)
	})
	return err
}

// Delete removes key's state (a share group deleted, or its offsets).
func (p *Persister) Delete(ctx context.Context, key Key) error {
	req := kmsg.NewPtrDeleteShareGroupStateRequest()
	req.SetVersion(deleteVersion)
	req.GroupID = key.GroupID
	t := kmsg.NewDeleteShareGroupStateRequestTopic()
	t.TopicID = key.TopicID
	pt := kmsg.NewDeleteShareGroupStateRequestTopicPartition()
	pt.Partition = key.Partition
	t.Partitions = append(t.Partitions, pt)
	req.Topics = append(req.Topics, t)

	_, err := p.do(ctx, key, req, func(r kmsg.Response) error {
		resp, ok := r.(*kmsg.DeleteShareGroupStateResponse)
		if !ok {
			return errUnexpected(r)
		}
		for _, t := range resp.Topics {
			for _, pp := range t.Partitions {
				if t.TopicID == key.TopicID && pp.Partition == key.Partition {
					return partitionError(pp.ErrorCode, pp.ErrorMessage)
				}
			}
		}
		return errMissing(key)
	})
	return err
}

// ReadSummary returns key's start offset and epochs without its batches
// (DescribeShareGroupOffsets and the lag).
func (p *Persister) ReadSummary(ctx context.Context, key Key, leaderEpoch int32) (Summary, error) {
	req := kmsg.NewPtrReadShareGroupStateSummaryRequest()
	req.SetVersion(summaryVersion)
	req.GroupID = key.GroupID
	t := kmsg.NewReadShareGroupStateSummaryRequestTopic()
	t.TopicID = key.TopicID
	pt := kmsg.NewReadShareGroupStateSummaryRequestTopicPartition()
	pt.Partition, pt.LeaderEpoch = key.Partition, leaderEpoch
	t.Partitions = append(t.Partitions, pt)
	req.Topics = append(req.Topics, t)

	var s Summary
	_, err := p.do(ctx, key, req, func(r kmsg.Response) error {
		resp, ok := r.(*kmsg.ReadShareGroupStateSummaryResponse)
		if !ok {
			return errUnexpected(r)
		}
		for _, t := range resp.Topics {
			for _, pp := range t.Partitions {
				if t.TopicID != key.TopicID || pp.Partition != key.Partition {
					continue
				}
				if err := partitionError(pp.ErrorCode, pp.ErrorMessage); err != nil {
					return err
				}
				s = Summary{StateEpoch: pp.StateEpoch, LeaderEpoch: pp.LeaderEpoch, StartOffset: pp.StartOffset, DeliveryCompleteCount: pp.DeliveryCompleteCount}
				return nil
			}
		}
		return errMissing(key)
	})
	return s, err
}
