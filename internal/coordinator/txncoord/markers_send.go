package txncoord

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/replication"
)

// writeTxnMarkersVersion is the WriteTxnMarkers version sent: v1, the
// flexible one every broker of the pinned release takes (v2 adds the
// transaction version of KIP-1228, which the marker jobs do not carry).
const writeTxnMarkersVersion = 1

// send writes entries' markers to one leader and applies the answer.
func (c *MarkerChannel) send(leader int32, entries []markerEntry) {
	ctx, cancel := context.WithTimeout(c.ctx, c.opts.RequestTimeout)
	defer cancel()
	req := markersRequest(entries)
	resp, err := c.request(ctx, leader, req)
	if c.ctx.Err() != nil {
		return // stopped
	}
	c.applyResponse(leader, entries, resp, err)
	c.wake()
}

// request sends req to the leader: through the local writer when it is
// this broker, else to its inter-broker listener.
func (c *MarkerChannel) request(ctx context.Context, leader int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error) {
	if leader == c.nodeID {
		return c.opts.Local.WriteTxnMarkers(ctx, req), nil
	}
	addr, ok := replication.BrokerAddress(c.image(), leader, c.opts.Listener)
	if !ok || c.opts.Peers == nil {
		return nil, fmt.Errorf("broker %d has no %s endpoint", leader, c.opts.Listener)
	}
	resp, err := c.opts.Peers.Request(ctx, addr, req)
	if err != nil {
		return nil, fmt.Errorf("WriteTxnMarkers to broker %d at %s: %w", leader, addr, err)
	}
	r, ok := resp.(*kmsg.WriteTxnMarkersResponse)
	if !ok {
		return nil, fmt.Errorf("WriteTxnMarkers to broker %d: answered %T", leader, resp)
	}
	return r, nil
}

// markersRequest is one marker per entry, its partitions grouped by topic.
func markersRequest(entries []markerEntry) *kmsg.WriteTxnMarkersRequest {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.SetVersion(writeTxnMarkersVersion)
	for _, e := range entries {
		job := e.txn.job
		m := kmsg.NewWriteTxnMarkersRequestMarker()
		m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch = job.ProducerID, job.ProducerEpoch, job.Commit, job.CoordinatorEpoch
		parts := slices.Clone(e.parts)
		slices.SortFunc(parts, compareTP)
		for _, tp := range parts {
			if n := len(m.Topics); n == 0 || m.Topics[n-1].Topic != tp.Topic {
				t := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
				t.Topic = tp.Topic
				m.Topics = append(m.Topics, t)
			}
			last := &m.Topics[len(m.Topics)-1]
			last.Partitions = append(last.Partitions, tp.Partition)
		}
		req.Markers = append(req.Markers, m)
	}
	return req
}

// markerOutcome is what a partition's answer means for its marker.
type markerOutcome int

const (
	markerAcked markerOutcome = iota
	markerRetry
	// markerFenced: the producer or this coordinator was fenced; the
	// transaction's markers are no longer this coordinator's to write.
	markerFenced
	// markerUnexpected: Kafka's send thread fails on it; here it is
	// logged and retried.
	markerUnexpected
)

// classify is Kafka's TransactionMarkerRequestCompletionHandler's table.
func classify(code int16) markerOutcome {
	switch code {
	case 0, kerr.UnsupportedForMessageFormat.Code, kerr.UnsupportedVersion.Code:
		// A partition that cannot hold the marker never held the
		// producer's data either.
		return markerAcked
	case kerr.UnknownTopicOrPartition.Code, kerr.NotLeaderForPartition.Code, kerr.NotEnoughReplicas.Code,
		kerr.NotEnoughReplicasAfterAppend.Code, kerr.RequestTimedOut.Code, kerr.KafkaStorageError.Code:
		return markerRetry
	case kerr.InvalidProducerEpoch.Code, kerr.TransactionCoordinatorFenced.Code:
		return markerFenced
	}
	return markerUnexpected
}

// applyResponse applies one leader's answer (or the request's failure) to
// the entries it carried.
func (c *MarkerChannel) applyResponse(leader int32, entries []markerEntry, resp *kmsg.WriteTxnMarkersResponse, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.mu.dests[leader]; ok {
		d.inflight = false
	}
	if err != nil {
		c.log.Debug("sending transaction markers failed; retrying", "broker", leader, "err", err)
	}
	now := c.clock.Now()
	for _, e := range entries {
		t := e.txn
		if c.mu.txns[t.job.TransactionalID] != t {
			continue
		}
		retry, fenced := c.entryOutcome(leader, e, resp, err)
		switch {
		case fenced:
			delete(c.mu.txns, t.job.TransactionalID)
		case len(retry) > 0:
			c.mu.ready = append(c.mu.ready, sendItem{txn: t, parts: retry, due: now.Add(c.backoff(t))})
		case len(t.remaining) == 0:
			c.completeLocked(t)
		}
	}
}

// entryOutcome applies an entry's partition codes to its job and returns
// the partitions to send again, or fenced.
func (c *MarkerChannel) entryOutcome(leader int32, e markerEntry, resp *kmsg.WriteTxnMarkersResponse, err error) (retry []kafka.TopicPartition, fenced bool) {
	t := e.txn
	codes := partitionCodes(resp, t.job.ProducerID)
	if err != nil || codes == nil {
		return e.parts, false
	}
	for _, tp := range e.parts {
		code, ok := codes[tp]
		if !ok {
			retry = append(retry, tp)
			continue
		}
		switch classify(code) {
		case markerAcked:
			delete(t.remaining, tp)
			t.failures = 0
		case markerRetry:
			c.log.Debug("transaction marker not written; retrying", "transactional_id", t.job.TransactionalID,
				"partition", tp, "broker", leader, "err", kerr.ErrorForCode(code))
			retry = append(retry, tp)
		case markerFenced:
			c.log.Info("transaction marker refused as fenced; the transaction's markers are no longer this coordinator's",
				"transactional_id", t.job.TransactionalID, "partition", tp, "err", kerr.ErrorForCode(code))
			return nil, true
		default:
			c.log.Error("unexpected error writing a transaction marker; retrying", "transactional_id", t.job.TransactionalID,
				"partition", tp, "broker", leader, "err", kerr.ErrorForCode(code))
			retry = append(retry, tp)
		}
	}
	return retry, false
}

// partitionCodes are the codes the answer holds for the producer's
// marker, or nil when it holds none.
func partitionCodes(resp *kmsg.WriteTxnMarkersResponse, producerID int64) map[kafka.TopicPartition]int16 {
	if resp == nil {
		return nil
	}
	for _, m := range resp.Markers {
		if m.ProducerID != producerID {
			continue
		}
		codes := make(map[kafka.TopicPartition]int16)
		for _, t := range m.Topics {
			for _, p := range t.Partitions {
				codes[kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = p.ErrorCode
			}
		}
		return codes
	}
	return nil
}

func compareTP(a, b kafka.TopicPartition) int {
	return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
}
