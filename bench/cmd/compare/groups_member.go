package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// memberView is one member's partitions as the settle check sees them: when each was
// assigned, and when the member first polled a record of it after the last mark (and
// after its assignment).
type memberView struct {
	Assigned map[int32]time.Time
	Seen     map[int32]time.Time
}

// settled reports whether the members hold every partition 0..partitions-1, each exactly
// once, every member at least one, and have each polled a record of every partition they
// hold since the mark; at is the latest of those polls, when the group was consuming all
// of its topic again.
func settled(views []memberView, partitions int) (at time.Time, ok bool) {
	owners := make(map[int32]int, partitions)
	for _, v := range views {
		if len(v.Assigned) == 0 {
			return time.Time{}, false
		}
		for p := range v.Assigned {
			owners[p]++
		}
	}
	if len(owners) != partitions {
		return time.Time{}, false
	}
	for p := int32(0); p < int32(partitions); p++ {
		if owners[p] != 1 {
			return time.Time{}, false
		}
	}
	for _, v := range views {
		for p := range v.Assigned {
			t, ok := v.Seen[p]
			if !ok {
				return time.Time{}, false
			}
			if t.After(at) {
				at = t
			}
		}
	}
	return at, true
}

// lastAssigned is the latest time a member was given a partition after mark (false when
// none was): how much of a rebalance was the protocol's, before the fetching.
func lastAssigned(views []memberView, mark time.Time) (time.Time, bool) {
	var last time.Time
	for _, v := range views {
		for _, t := range v.Assigned {
			if t.After(mark) && t.After(last) {
				last = t
			}
		}
	}
	return last, !last.IsZero()
}

// groupMember is one kgo group consumer of the rebalance rows with its partition state,
// kept by kgo's callbacks and its own poll loop.
type groupMember struct {
	cl   *kgo.Client
	done chan struct{} // closed when the poll loop has returned

	mu       sync.Mutex
	assigned map[int32]time.Time
	seen     map[int32]time.Time
	mark     time.Time

	joinGroups atomic.Int64 // JoinGroup requests written (classic protocol)
	heartbeats atomic.Int64 // ConsumerGroupHeartbeat requests written (consumer protocol)
}

// OnBrokerWrite counts the group requests the member's client writes, so a consumer
// protocol row can prove kgo did not fall back to the classic protocol.
func (m *groupMember) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err != nil {
		return
	}
	switch key {
	case 11:
		m.joinGroups.Add(1)
	case 68:
		m.heartbeats.Add(1)
	}
}

func startGroupMember(ctx context.Context, bootstrap, group, topic string, v groupVariant) (*groupMember, error) {
	m := &groupMember{done: make(chan struct{}), assigned: map[int32]time.Time{}, seen: map[int32]time.Time{}}
	opts := []kgo.Opt{
		kgo.SeedBrokers(seeds(bootstrap)...),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.FetchMaxWait(500 * time.Millisecond),
		kgo.WithHooks(m),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { m.assign(ps[topic]) }),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { m.drop(ps[topic]) }),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { m.drop(ps[topic]) }),
	}
	cl, err := kgo.NewClient(append(opts, v.opts()...)...)
	if err != nil {
		return nil, fmt.Errorf("group member: %w", err)
	}
	m.cl = cl
	go m.poll(ctx)
	return m, nil
}

// poll consumes until the client is closed, noting the first record of each partition.
func (m *groupMember) poll(ctx context.Context) {
	defer close(m.done)
	for {
		fs := m.cl.PollFetches(ctx)
		if fs.IsClientClosed() || ctx.Err() != nil {
			return
		}
		now := time.Now()
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			if len(p.Records) > 0 {
				m.sawRecord(p.Partition, now)
			}
		})
	}
}

func (m *groupMember) assign(ps []int32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	for _, p := range ps {
		m.assigned[p] = now
		delete(m.seen, p)
	}
}

func (m *groupMember) drop(ps []int32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range ps {
		delete(m.assigned, p)
		delete(m.seen, p)
	}
}

func (m *groupMember) sawRecord(p int32, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, held := m.assigned[p]; !held || at.Before(m.mark) {
		return
	}
	if _, ok := m.seen[p]; !ok {
		m.seen[p] = at
	}
}

// setMark forgets the records polled so far: only those polled from t on count.
func (m *groupMember) setMark(t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mark = t
	clear(m.seen)
}

func (m *groupMember) view() memberView {
	m.mu.Lock()
	defer m.mu.Unlock()
	v := memberView{Assigned: make(map[int32]time.Time, len(m.assigned)), Seen: make(map[int32]time.Time, len(m.seen))}
	for p, t := range m.assigned {
		v.Assigned[p] = t
	}
	for p, t := range m.seen {
		v.Seen[p] = t
	}
	return v
}

// close leaves the group cleanly and waits for the poll loop.
func (m *groupMember) close() {
	m.cl.Close()
	<-m.done
}

// protocolCheck says what is wrong with the group requests the members wrote for the
// variant: a consumer-protocol member must not send JoinGroup, a classic one must.
func protocolCheck(v groupVariant, joinGroups, heartbeats int64) error {
	switch {
	case v.Consumer && joinGroups > 0:
		return fmt.Errorf("kgo fell back to the classic protocol (%d JoinGroup requests written, %d ConsumerGroupHeartbeat): the broker refused the consumer protocol", joinGroups, heartbeats)
	case v.Consumer && heartbeats == 0:
		return fmt.Errorf("no ConsumerGroupHeartbeat request was written")
	case !v.Consumer && (joinGroups == 0 || heartbeats > 0):
		return fmt.Errorf("classic variant wrote %d JoinGroup and %d ConsumerGroupHeartbeat requests", joinGroups, heartbeats)
	}
	return nil
}
