package groupcoord

// DescribeShareGroupOffsets, AlterShareGroupOffsets and
// DeleteShareGroupOffsets (KIP-932) as Kafka 4.4's GroupCoordinatorService
// runs them: the group's shard decides what to ask the share coordinator
// and records the outcome; the share coordinator calls run between the
// shard's steps, never on it.

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/kafka"
)

// ShareOffsetsPersister is what the offsets admin APIs need beyond
// SharePersister: the value given to SetSharePersister implements it too
// (the node's adapter of sharepersist.Persister). Each call is one share
// partition; an error is that partition's (a *kerr.Error's code, else
// UNKNOWN_SERVER_ERROR).
type ShareOffsetsPersister interface {
	// ReadStateSummary is Kafka's ReadShareGroupStateSummary of one
	// partition (leader epoch 0: a summary fences nothing). A partition
	// without state answers start offset -1, as the share coordinator.
	ReadStateSummary(ctx context.Context, groupID string, topicID kafka.UUID, partition int32) (group.ShareStateSummary, error)
	// InitializeStateAt is Kafka's InitializeShareGroupState of one
	// partition at startOffset with stateEpoch (the group epoch): it
	// replaces the partition's state.
	InitializeStateAt(ctx context.Context, groupID string, topicID kafka.UUID, partition, stateEpoch int32, startOffset int64) error
	// LatestOffset is the partition's high watermark, the offset its next
	// record gets (Kafka's ListOffsets LATEST, read_uncommitted), for the
	// lag.
	LatestOffset(ctx context.Context, topic string, partition int32) (int64, error)
}

// shareFanout bounds the share coordinator calls one request runs at
// once.
const shareFanout = 8

func (c *GroupCoordinator) offsetsPersister() (SharePersister, ShareOffsetsPersister) {
	p := c.sharePersister()
	op, _ := p.(ShareOffsetsPersister)
	return p, op
}

var errNoPersister = errors.New("share group state persister not configured")

// DescribeShareGroupOffsets serves one group of a
// DescribeShareGroupOffsets: topics nil describes every initialized
// partition of the group, else the partitions asked for (the group is not
// looked at: a partition without state answers -1). A partition beyond the
// topic's count answers -1 too (the share coordinator refuses it); Kafka
// 4.4.0 leaves such a request unanswered until the client's timeout
// (observed with bench/kafka-ref).
func (c *GroupCoordinator) DescribeShareGroupOffsets(ctx context.Context, groupID string, topics []group.ShareOffsetsTopic) group.ShareGroupOffsets {
	plan, code := call(ctx, c, groupID, func(_ time.Time, m *group.Manager, reply func(group.ShareOffsetsPlan)) {
		if topics == nil {
			reply(m.PlanAllShareOffsets(groupID))
			return
		}
		reply(m.PlanShareOffsets(topics))
	})
	if code != 0 {
		return group.ShareGroupOffsets{GroupID: groupID, ErrorCode: code, ErrorMessage: description(code)}
	}
	out := group.ShareGroupOffsets{GroupID: groupID, Topics: []group.TopicOffsets{}}
	if len(plan.Read) > 0 {
		_, op := c.offsetsPersister()
		if op == nil {
			return group.ShareGroupOffsets{GroupID: groupID, ErrorCode: kerr.UnknownServerError.Code, ErrorMessage: ptrTo(errNoPersister.Error())}
		}
		out.Topics = readShareOffsets(ctx, op, groupID, plan.Read)
	}
	for _, t := range plan.Missing {
		out.Topics = append(out.Topics, group.MissingTopicOffsets(t))
	}
	return out
}

// readShareOffsets reads the summaries of the partitions, then the end
// offsets of those whose lag is known.
func readShareOffsets(ctx context.Context, op ShareOffsetsPersister, groupID string, read []group.ShareStateTopic) []group.TopicOffsets {
	out := make([]group.TopicOffsets, len(read))
	var jobs []func()
	for i, t := range read {
		out[i] = group.TopicOffsets{TopicName: t.TopicName, TopicID: t.TopicID, Partitions: make([]group.PartitionOffsets, len(t.Partitions))}
		for j, p := range t.Partitions {
			dst := &out[i].Partitions[j]
			jobs = append(jobs, func() {
				s, err := op.ReadStateSummary(ctx, groupID, t.TopicID, p)
				if err != nil {
					s = group.ShareStateSummary{ErrorCode: group.ErrorCodeOf(err), StartOffset: group.UninitializedStartOffset}
				}
				if !s.LagKnown() {
					*dst = group.SummaryOffsets(p, s)
					return
				}
				end, err := op.LatestOffset(ctx, t.TopicName, p)
				*dst = group.LagOffsets(p, s, end, err)
			})
		}
	}
	runBounded(jobs)
	return out
}

// runBounded runs jobs, shareFanout at a time, and waits for them.
func runBounded(jobs []func()) {
	sem := make(chan struct{}, shareFanout)
	var wg sync.WaitGroup
	for _, job := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			job()
		}()
	}
	wg.Wait()
}

// AlterShareGroupOffsets serves an AlterShareGroupOffsets: the empty (or
// new) group's partitions are initialized at the asked start offsets with
// the group epoch as state epoch, then recorded as initialized. A
// partition the share coordinator refuses carries its error, and no
// partition is recorded as initialized (Kafka's persisterInitialize for
// an alter: they stay initializing). The result's Init is cleared.
func (c *GroupCoordinator) AlterShareGroupOffsets(ctx context.Context, groupID string, topics []group.ShareOffsetsAlterTopic) group.AlterShareOffsetsResult {
	if groupID == "" {
		return group.AlterShareOffsetsResult{ErrorCode: kerr.InvalidGroupID.Code, ErrorMessage: description(kerr.InvalidGroupID.Code)}
	}
	res, code := call(ctx, c, groupID, func(now time.Time, m *group.Manager, reply func(group.AlterShareOffsetsResult)) {
		m.AlterShareOffsets(now, groupID, topics, reply)
	})
	if code != 0 {
		return group.AlterShareOffsetsResult{ErrorCode: code, ErrorMessage: description(code)}
	}
	init := res.Init
	res.Init = group.ShareInitRequest{}
	if res.ErrorCode != 0 || len(init.Topics) == 0 {
		return res
	}
	_, op := c.offsetsPersister()
	if op == nil {
		return group.AlterShareOffsetsResult{ErrorCode: kerr.UnknownServerError.Code, ErrorMessage: ptrTo(errNoPersister.Error())}
	}
	failed := initializeAt(ctx, op, init)
	if len(failed) > 0 {
		markAlterFailures(&res, init, failed)
		return res
	}
	c.recordAltered(ctx, init)
	return res
}

type topicPartition struct {
	id        kafka.UUID
	partition int32
}

// initializeAt initializes every partition of init; it returns the
// failures.
func initializeAt(ctx context.Context, op ShareOffsetsPersister, init group.ShareInitRequest) map[topicPartition]error {
	var mu sync.Mutex
	failed := map[topicPartition]error{}
	var jobs []func()
	for _, t := range init.Topics {
		for _, p := range t.Partitions {
			jobs = append(jobs, func() {
				if err := op.InitializeStateAt(ctx, init.GroupID, t.TopicID, p.Partition, init.StateEpoch, p.StartOffset); err != nil {
					mu.Lock()
					failed[topicPartition{t.TopicID, p.Partition}] = err
					mu.Unlock()
				}
			})
		}
	}
	runBounded(jobs)
	return failed
}

// markAlterFailures puts the share coordinator's errors on their
// partitions (Kafka's buildErrorResponse for an initialize result).
func markAlterFailures(res *group.AlterShareOffsetsResult, init group.ShareInitRequest, failed map[topicPartition]error) {
	slog.Warn("share group offsets not altered", "group", init.GroupID, "partitions", len(failed))
	for i := range res.Topics {
		t := &res.Topics[i]
		for j := range t.Partitions {
			p := &t.Partitions[j]
			err, ok := failed[topicPartition{t.TopicID, p.Partition}]
			if !ok || p.ErrorCode != 0 {
				continue
			}
			p.ErrorCode, p.ErrorMessage = group.ErrorCodeOf(err), persisterMessage(err)
		}
	}
}

// recordAltered records the altered partitions as initialized. As in
// Kafka, the answer does not depend on it: a failure leaves them
// initializing, asked again by a later heartbeat.
func (c *GroupCoordinator) recordAltered(ctx context.Context, init group.ShareInitRequest) {
	topics := make([]group.ShareStateTopic, 0, len(init.Topics))
	for _, t := range init.Topics {
		st := group.ShareStateTopic{TopicID: t.TopicID, TopicName: t.TopicName}
		for _, p := range t.Partitions {
			st.Partitions = append(st.Partitions, p.Partition)
		}
		topics = append(topics, st)
	}
	_, code := call(ctx, c, init.GroupID, func(now time.Time, m *group.Manager, reply func(struct{})) {
		m.ShareStateInitialized(now, init.GroupID, topics, func(error) { reply(struct{}{}) })
	})
	if code != 0 {
		slog.Warn("altered share group offsets not recorded as initialized", "group", init.GroupID, "code", code)
	}
}

// persisterMessage is the share coordinator's message of a failure: the
// error's text unless it is a bare Kafka error (Kafka's null message).
func persisterMessage(err error) *string {
	var ke *kerr.Error
	if errors.As(err, &ke) && err == error(ke) {
		return nil
	}
	return ptrTo(err.Error())
}

func description(code int16) *string {
	if e, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		return &e.Description
	}
	return nil
}

func ptrTo[T any](v T) *T { return &v }
