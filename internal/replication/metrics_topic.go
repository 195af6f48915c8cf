package replication

import (
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TopicStats are one topic's BrokerTopicMetrics counters (Kafka's
// BrokerTopicMetrics meters, kept as plain counts): the hot paths add to
// them through the partition, a collector reads them at scrape time.
type TopicStats struct {
	BytesIn               atomic.Int64
	MessagesIn            atomic.Int64
	BytesOut              atomic.Int64
	BytesRejected         atomic.Int64
	FailedProduceRequests atomic.Int64
	FailedFetchRequests   atomic.Int64
	TotalProduceRequests  atomic.Int64
	TotalFetchRequests    atomic.Int64
}

// TopicCounts are a snapshot of TopicStats, or their sum over topics.
type TopicCounts struct {
	BytesIn, MessagesIn, BytesOut, BytesRejected                                         int64
	FailedProduceRequests, FailedFetchRequests, TotalProduceRequests, TotalFetchRequests int64
}

// Counts reads the counters.
func (s *TopicStats) Counts() TopicCounts {
	return TopicCounts{
		BytesIn: s.BytesIn.Load(), MessagesIn: s.MessagesIn.Load(), BytesOut: s.BytesOut.Load(), BytesRejected: s.BytesRejected.Load(),
		FailedProduceRequests: s.FailedProduceRequests.Load(), FailedFetchRequests: s.FailedFetchRequests.Load(),
		TotalProduceRequests: s.TotalProduceRequests.Load(), TotalFetchRequests: s.TotalFetchRequests.Load(),
	}
}

func (c *TopicCounts) add(o TopicCounts) {
	c.BytesIn += o.BytesIn
	c.MessagesIn += o.MessagesIn
	c.BytesOut += o.BytesOut
	c.BytesRejected += o.BytesRejected
	c.FailedProduceRequests += o.FailedProduceRequests
	c.FailedFetchRequests += o.FailedFetchRequests
	c.TotalProduceRequests += o.TotalProduceRequests
	c.TotalFetchRequests += o.TotalFetchRequests
}

// TopicSnapshot is one topic's counts.
type TopicSnapshot struct {
	Topic string
	TopicCounts
}

// BrokerTopicStats are the broker's BrokerTopicMetrics: one TopicStats per
// topic with a partition hosted here. The aggregate is their sum plus what
// topics no longer hosted counted, computed when read, so the hot path
// adds to one set of counters, not two. Replication bytes are aggregate
// only, as in Kafka.
type BrokerTopicStats struct {
	ReplicationBytesIn  atomic.Int64
	ReplicationBytesOut atomic.Int64

	mu     sync.RWMutex
	topics map[string]*topicStatsRef
	// departed is what the topics no longer hosted counted.
	departed TopicCounts
}

// topicStatsRef counts the hosted partitions sharing a topic's stats, so
// the topic's series go when its last partition does (deleted, moved away).
type topicStatsRef struct {
	stats TopicStats
	refs  int
}

func newBrokerTopicStats() *BrokerTopicStats {
	return &BrokerTopicStats{topics: make(map[string]*topicStatsRef)}
}

// acquire returns topic's stats for one more hosted partition.
func (s *BrokerTopicStats) acquire(topic string) *TopicStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.topics[topic]
	if !ok {
		r = &topicStatsRef{}
		s.topics[topic] = r
	}
	r.refs++
	return &r.stats
}

// release drops one hosted partition of topic; the last one drops its stats.
func (s *BrokerTopicStats) release(topic string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.topics[topic]; ok {
		if r.refs--; r.refs <= 0 {
			// Appends still in flight to the topic may add to it after
			// this; the aggregate misses those few.
			s.departed.add(r.stats.Counts())
			delete(s.topics, topic)
		}
	}
}

// Topic returns topic's stats while a partition of it is hosted here.
func (s *BrokerTopicStats) Topic(topic string) (*TopicStats, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.topics[topic]
	if !ok {
		return nil, false
	}
	return &r.stats, true
}

// Snapshot returns the aggregate over all topics and each hosted topic's
// counts, in no order. The lock is held only to read the counters (no
// allocation per partition; a scrape never blocks appends).
func (s *BrokerTopicStats) Snapshot() (all TopicCounts, topics []TopicSnapshot) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	all = s.departed
	topics = make([]TopicSnapshot, 0, len(s.topics))
	for topic, r := range s.topics {
		c := r.stats.Counts()
		all.add(c)
		topics = append(topics, TopicSnapshot{Topic: topic, TopicCounts: c})
	}
	return all, topics
}

// partitionMetrics is what a hosted partition's hot paths count into: its
// topic's stats and, on a follower, its fetcher lag.
type partitionMetrics struct {
	broker *BrokerTopicStats
	topic  *TopicStats // nil: not counted (a partition not yet hosted)
	// fetcherLag is Kafka's FetcherLagMetrics: the leader's high watermark
	// minus this follower's log end offset after its last fetch.
	fetcherLag atomic.Int64
}

// produced counts one partition of a produce request that reached the
// replica manager, as Kafka's appendToLocalLog does: every one in
// TotalProduceRequests, bytes and messages of a successful append, the
// bytes of a batch refused as too large, and failures other than the
// expected ones (Kafka counts "unexpected" failures only).
func (m *partitionMetrics) produced(n int, res AppendResult) {
	if m == nil || m.topic == nil {
		return
	}
	t := m.topic
	t.TotalProduceRequests.Add(1)
	if res.Err == nil {
		t.BytesIn.Add(int64(n))
		t.MessagesIn.Add(res.LastOffset - res.FirstOffset + 1)
		return
	}
	switch ErrorCode(res.Err) {
	case kerr.MessageTooLarge.Code:
		t.BytesRejected.Add(int64(n))
	case kerr.UnknownTopicOrPartition.Code, kerr.NotLeaderForPartition.Code, kerr.RecordListTooLarge.Code,
		kerr.CorruptMessage.Code, kerr.KafkaStorageError.Code:
		// Expected: not a broker failure.
	default:
		t.FailedProduceRequests.Add(1)
	}
}

// fetchRequested counts one partition of a fetch request at its first
// read, as Kafka's fetchMessages does, and a failure other than the
// expected ones.
func (m *partitionMetrics) fetchRequested(err error) {
	if m == nil || m.topic == nil {
		return
	}
	t := m.topic
	t.TotalFetchRequests.Add(1)
	switch ErrorCode(err) {
	case 0, kerr.UnknownTopicOrPartition.Code, kerr.NotLeaderForPartition.Code, kerr.UnknownLeaderEpoch.Code,
		kerr.FencedLeaderEpoch.Code, kerr.ReplicaNotAvailable.Code, kerr.KafkaStorageError.Code,
		kerr.InconsistentTopicID.Code, kerr.OffsetOutOfRange.Code:
	default:
		t.FailedFetchRequests.Add(1)
	}
}

// fetched counts the record bytes of one partition's fetch answer: bytes
// out to a consumer (per topic and aggregate), replication bytes out to a
// follower (aggregate only), as Kafka's updateBytesOut.
func (m *partitionMetrics) fetched(follower bool, n int64) {
	if m == nil || m.topic == nil || n == 0 {
		return
	}
	if follower {
		m.broker.ReplicationBytesOut.Add(n)
		return
	}
	m.topic.BytesOut.Add(n)
}

// setFetcherLag records a follower's lag after a fetch.
func (m *partitionMetrics) setFetcherLag(lag int64) {
	if m != nil {
		m.fetcherLag.Store(max(lag, 0))
	}
}

// countProduceRefused counts a produce to a partition not hosted here (or
// whose log failed to open) while the topic has stats on this broker: as
// Kafka, in the total, not as a failure.
func (s *BrokerTopicStats) countProduceRefused(topic string, err error) {
	if ts, ok := s.Topic(topic); ok {
		m := partitionMetrics{broker: s, topic: ts}
		m.produced(0, AppendResult{Err: err})
	}
}

// countFetchRequests counts a fetch's partitions after its first read; one
// not hosted here is looked up by its topic (an error path only).
func (s *BrokerTopicStats) countFetchRequests(results []FetchPartitionResult) {
	for i := range results {
		if p := results[i].part; p != nil {
			p.metrics.fetchRequested(results[i].Err)
		} else if ts, ok := s.Topic(results[i].TP.Topic); ok {
			m := partitionMetrics{broker: s, topic: ts}
			m.fetchRequested(results[i].Err)
		}
	}
}

// CountFetchedBytes counts the record bytes of a Fetch's answer (BytesOut
// for a consumer, ReplicationBytesOut for a follower). The Fetch handler
// calls it when it sends the answer, not when a quota throttle answers
// empty instead: Kafka counts the bytes of the response it sends.
func CountFetchedBytes(follower bool, results []FetchPartitionResult) {
	for i := range results {
		if p := results[i].part; p != nil && results[i].Err == nil {
			p.metrics.fetched(follower, results[i].Records.Size)
		}
	}
}
