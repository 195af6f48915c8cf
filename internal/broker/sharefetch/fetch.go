package sharefetch

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/replication"
	"github.com/sluice-io/sluice/internal/share"
)

// partResult is one partition of a ShareFetch answer.
type partResult struct {
	code     int16
	msg      string
	ackCode  int16
	records  []byte
	acquired []share.AcquiredRecords
}

// ShareFetch serves a ShareFetch whose group READ the caller authorized;
// topicAllowed says whether the client may READ a topic. conn names the
// client's connection (its share session ends with it). Partitions this
// broker does not lead answer NOT_LEADER_OR_FOLLOWER; the caller adds the
// current leaders.
func (m *Manager) ShareFetch(ctx context.Context, req *kmsg.ShareFetchRequest, conn string, topicAllowed func(string) bool) *kmsg.ShareFetchResponse {
	resp := req.ResponseKind().(*kmsg.ShareFetchResponse)
	resp.SetVersion(req.Version)
	group, member := deref(req.GroupID), deref(req.MemberID)
	if group == "" || member == "" {
		return fetchTopError(resp, kerr.InvalidRequest, "group id and member id are required")
	}
	results, fetch, forget, acks := readShareFetch(m.opts.Image(), req, topicAllowed)
	key := share.SessionKey{GroupID: group, MemberID: member}
	m.mu.Lock()
	fc, err := m.sessions.ShareFetch(key, req.ShareSessionEpoch, fetch, forget, len(acks) > 0, conn)
	m.mu.Unlock()
	if err != nil {
		return fetchTopError(resp, err, "")
	}
	settings := m.opts.Group(group)
	for tip, code := range m.acknowledge(ctx, group, member, acks, req.Version >= 2 && req.IsRenewAck && settings.RenewAcknowledge) {
		r := results[tip]
		if r == nil {
			r = &partResult{}
			results[tip] = r
		}
		r.ackCode = code
	}
	resp.AcquisitionLockTimeoutMillis = int32(settings.Partition.RecordLockDuration.Milliseconds())
	if fc.Final {
		m.closeSession(ctx, key)
	} else {
		var parts []share.TopicIDPartition
		for _, tip := range fc.Partitions {
			if r := results[tip]; r == nil || r.code == 0 {
				parts = append(parts, tip)
			}
		}
		m.fetch(ctx, req, group, member, settings, parts, results, topicAllowed)
	}
	return buildFetchResponse(resp, results)
}

// readShareFetch sorts a ShareFetch's partitions: those refused (unknown
// topic id, not authorized) with their codes, those to fetch from, those
// to forget, and the acknowledgements of each.
func readShareFetch(im *metadata.Image, req *kmsg.ShareFetchRequest, topicAllowed func(string) bool) (
	results map[share.TopicIDPartition]*partResult, fetch, forget []share.TopicIDPartition, acks map[share.TopicIDPartition][]share.AckBatch) {
	results, acks = map[share.TopicIDPartition]*partResult{}, map[share.TopicIDPartition][]share.AckBatch{}
	for _, t := range req.Topics {
		_, code := topicName(im, t.TopicID, topicAllowed)
		for _, p := range t.Partitions {
			tip := share.TopicIDPartition{TopicID: t.TopicID, Partition: p.Partition}
			if code != 0 {
				results[tip] = &partResult{code: code}
				continue
			}
			fetch = append(fetch, tip)
			for _, b := range p.AcknowledgementBatches {
				acks[tip] = append(acks[tip], share.AckBatch{FirstOffset: b.FirstOffset, LastOffset: b.LastOffset, AcknowledgeTypes: b.AcknowledgeTypes})
			}
		}
	}
	for _, t := range req.ForgottenTopicsData {
		for _, p := range t.Partitions {
			forget = append(forget, share.TopicIDPartition{TopicID: t.TopicID, Partition: p})
		}
	}
	return results, fetch, forget, acks
}

// topicName resolves a topic id and checks READ on it: UNKNOWN_TOPIC_ID
// for an id the metadata does not know, TOPIC_AUTHORIZATION_FAILED for a
// topic the client may not read.
func topicName(im *metadata.Image, id kafka.UUID, allowed func(string) bool) (string, int16) {
	t, ok := im.TopicByID(id)
	if !ok {
		return "", kerr.UnknownTopicID.Code
	}
	if !allowed(t.Name) {
		return t.Name, kerr.TopicAuthorizationFailed.Code
	}
	return t.Name, 0
}

// fetch acquires records of parts for member, waiting up to the request's
// MaxWaitMillis while nothing could be acquired (Kafka's
// DelayedShareFetch).
func (m *Manager) fetch(ctx context.Context, req *kmsg.ShareFetchRequest, group, member string, gs GroupSettings,
	parts []share.TopicIDPartition, results map[share.TopicIDPartition]*partResult, allowed func(string) bool) {
	if len(parts) == 0 {
		return
	}
	deadline := m.opts.Clock.Now().Add(time.Duration(max(req.MaxWaitMillis, 0)) * time.Millisecond)
	for {
		changed := m.changedCh()
		atEnd, got := m.fetchOnce(ctx, req, group, member, gs, parts, results, allowed)
		wait := deadline.Sub(m.opts.Clock.Now())
		if got || wait <= 0 || ctx.Err() != nil {
			return
		}
		m.waitForRecords(ctx, wait, changed, atEnd, gs)
	}
}

// waitForRecords waits up to wait for an append to one of atEnd (the
// partitions read to their end) or a change of any share partition.
func (m *Manager) waitForRecords(ctx context.Context, wait time.Duration, changed <-chan struct{}, atEnd []replication.FetchPartition, gs GroupSettings) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	appended := make(chan struct{})
	if len(atEnd) > 0 {
		go func() {
			defer close(appended)
			m.opts.Log.Fetch(wctx, replication.FetchParams{ReplicaID: -1, ReplicaEpoch: -1, MaxWait: wait, MinBytes: 1, MaxBytes: 1, Isolation: isolation(gs)}, atEnd)
		}()
	}
	t := m.opts.Clock.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-changed:
	case <-appended:
	case <-t.C():
	}
}

func isolation(gs GroupSettings) replication.Isolation {
	if gs.ReadCommitted {
		return replication.IsolationCommitted
	}
	return replication.IsolationHighWatermark
}

// fetchOnce tries every partition once. It returns the partitions whose
// log had nothing past the share partition's next fetch offset, and
// whether anything was acquired or failed (either answers at once).
func (m *Manager) fetchOnce(ctx context.Context, req *kmsg.ShareFetchRequest, group, member string, gs GroupSettings,
	parts []share.TopicIDPartition, results map[share.TopicIDPartition]*partResult, allowed func(string) bool) ([]replication.FetchPartition, bool) {
	maxRecords := int(req.MaxRecords)
	if req.Version < 1 || maxRecords <= 0 {
		maxRecords = 500 // max.poll.records' default
	}
	maxBytes := int(req.MaxBytes)
	var atEnd []replication.FetchPartition
	got := false
	for _, tip := range parts {
		if maxRecords <= 0 || maxBytes <= 0 {
			break
		}
		r := results[tip]
		if r == nil {
			r = &partResult{}
			results[tip] = r
		}
		sp, err := m.partition(ctx, group, tip)
		if err != nil {
			r.code, r.msg = codeOf(err), err.Error()
			got = true
			continue
		}
		if !allowed(sp.tp.Topic) {
			r.code = kerr.TopicAuthorizationFailed.Code
			got = true
			continue
		}
		n, size, end, err := m.acquire(ctx, req, member, gs, sp, maxRecords, maxBytes, r)
		switch {
		case err != nil:
			r.code, r.msg = codeOf(err), err.Error()
			got = true
		case n > 0:
			got = true
			maxRecords -= n
			maxBytes -= size
		case end != nil:
			atEnd = append(atEnd, *end)
		}
	}
	return atEnd, got
}

// acquire reads sp's log from its next fetch offset and acquires what it
// can for member into r. It returns the records acquired and their bytes,
// or, when the log has nothing past the offset, the read to wait on.
func (m *Manager) acquire(ctx context.Context, req *kmsg.ShareFetchRequest, member string, gs GroupSettings, sp *sharePart,
	maxRecords, maxBytes int, r *partResult) (int, int, *replication.FetchPartition, error) {
	sp.mu.Lock()
	// A group config changed since the last fetch applies from now on.
	sp.p.SetConfig(gs.Partition)
	if !sp.p.CanAcquire() {
		sp.mu.Unlock()
		return 0, 0, nil, nil
	}
	off := sp.p.NextFetchOffset()
	sp.mu.Unlock()

	fp := replication.FetchPartition{TP: sp.tp, FetchOffset: off, CurrentLeaderEpoch: -1, LastFetchedEpoch: -1, MaxBytes: int32(maxBytes)}
	res := m.opts.Log.Fetch(ctx, replication.FetchParams{ReplicaID: -1, ReplicaEpoch: -1, MaxBytes: int32(maxBytes), Isolation: isolation(gs)},
		[]replication.FetchPartition{fp})[0]
	if errors.Is(res.Err, kerr.OffsetOutOfRange) && res.LogStartOffset > off {
		sp.mu.Lock()
		sp.p.UpdateLogStartOffset(res.LogStartOffset)
		sp.mu.Unlock()
		return 0, 0, nil, nil // read again from the new start on the next round
	}
	if res.Err != nil {
		return 0, 0, nil, res.Err
	}
	if res.Records.Size == 0 {
		return 0, 0, &fp, nil
	}
	data, err := readForAcquire(res.Records, off, maxRecords)
	if err != nil {
		return 0, 0, nil, errors.Join(err, kerr.KafkaStorageError)
	}
	var batches []share.FetchedBatch
	if _, err := records.Batches(data, func(h records.Header, batch []byte) error {
		batches = append(batches, share.FetchedBatch{BaseOffset: h.BaseOffset, LastOffset: h.LastOffset(), ProducerID: h.ProducerID,
			Transactional: h.IsTransactional(), AbortMarker: h.IsControl() && isAbortMarker(batch)})
		return nil
	}); err != nil {
		return 0, 0, nil, errors.Join(err, kerr.CorruptMessage)
	}
	aq := share.AcquireRequest{MemberID: member, Mode: share.AcquireMode(req.ShareAcquireMode), BatchSize: int(req.BatchSize),
		MaxRecords: maxRecords, FetchOffset: off, Batches: batches, ReadCommitted: gs.ReadCommitted}
	for _, a := range res.AbortedTransactions {
		aq.Aborted = append(aq.Aborted, share.AbortedTxn{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset})
	}
	now := m.opts.Clock.Now()
	sp.mu.Lock()
	sp.p.UpdateLogStartOffset(res.LogStartOffset)
	acquired, n := sp.p.Acquire(aq, now)
	sp.mu.Unlock()
	if n == 0 {
		return 0, 0, nil, nil
	}
	m.wakeExpiry(now.Add(gs.Partition.RecordLockDuration))
	r.acquired = append(r.acquired, acquired...)
	r.records = keepAcquired(data, acquired)
	return n, len(r.records), nil, nil
}

// isAbortMarker reports whether a control batch holds an ABORT marker (its
// one record's key names the type; control batches are never compressed).
func isAbortMarker(batch []byte) bool {
	abort := false
	_ = records.ForEachRecord(batch, func(r records.Record) error {
		if k, err := records.ParseControlKey(r.Key); err == nil && k.Type == records.ControlAbort {
			abort = true
		}
		return nil
	})
	return abort
}

// keepAcquired returns the record batches of data that hold an acquired
// offset: the client reads records from them and keeps the acquired ones.
// When those batches are one run of data (the usual case), the run is
// returned without a copy.
func keepAcquired(data []byte, acquired []share.AcquiredRecords) []byte {
	type span struct{ from, to int }
	var kept []span
	pos := 0
	_, _ = records.Batches(data, func(h records.Header, batch []byte) error {
		from := pos
		pos += len(batch)
		for _, a := range acquired {
			if a.FirstOffset <= h.LastOffset() && h.BaseOffset <= a.LastOffset {
				if n := len(kept); n > 0 && kept[n-1].to == from {
					kept[n-1].to = pos
				} else {
					kept = append(kept, span{from, pos})
				}
				break
			}
		}
		return nil
	})
	if len(kept) == 1 {
		return data[kept[0].from:kept[0].to]
	}
	var out []byte
	for _, k := range kept {
		out = append(out, data[k.from:k.to]...)
	}
	return out
}

// codeOf is the Kafka error code err carries (UNKNOWN_SERVER_ERROR when
// none), as the data plane maps it.
func codeOf(err error) int16 { return replication.ErrorCode(err) }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// fetchTopError answers the whole request with err's code.
func fetchTopError(resp *kmsg.ShareFetchResponse, err error, msg string) *kmsg.ShareFetchResponse {
	resp.ErrorCode = codeOf(err)
	if msg == "" {
		msg = err.Error()
	}
	resp.ErrorMessage = &msg
	return resp
}

// buildFetchResponse lays the partitions' results out by topic.
func buildFetchResponse(resp *kmsg.ShareFetchResponse, results map[share.TopicIDPartition]*partResult) *kmsg.ShareFetchResponse {
	byTopic := map[kafka.UUID]int{}
	for _, tip := range sortedParts(results) {
		r := results[tip]
		i, ok := byTopic[tip.TopicID]
		if !ok {
			t := kmsg.NewShareFetchResponseTopic()
			t.TopicID = tip.TopicID
			resp.Topics = append(resp.Topics, t)
			i = len(resp.Topics) - 1
			byTopic[tip.TopicID] = i
		}
		p := kmsg.NewShareFetchResponseTopicPartition()
		p.Partition, p.ErrorCode = tip.Partition, r.code
		if r.code != 0 && r.msg != "" {
			p.ErrorMessage = &r.msg
		}
		p.AcknowledgeErrorCode = r.ackCode
		// Records is not nullable in ShareFetch; kmsg writes nil as null.
		p.Records = r.records
		if p.Records == nil {
			p.Records = []byte{}
		}
		for _, a := range r.acquired {
			ar := kmsg.NewShareFetchResponseTopicPartitionAcquiredRecord()
			ar.FirstOffset, ar.LastOffset, ar.DeliveryCount = a.FirstOffset, a.LastOffset, a.DeliveryCount
			p.AcquiredRecords = append(p.AcquiredRecords, ar)
		}
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, p)
	}
	return resp
}

// sortedParts returns the keys of results in topic id, partition order,
// so answers are deterministic.
func sortedParts[V any](results map[share.TopicIDPartition]V) []share.TopicIDPartition {
	out := make([]share.TopicIDPartition, 0, len(results))
	for tip := range results {
		out = append(out, tip)
	}
	slices.SortFunc(out, func(a, b share.TopicIDPartition) int {
		if c := bytes.Compare(a.TopicID[:], b.TopicID[:]); c != 0 {
			return c
		}
		return cmp.Compare(a.Partition, b.Partition)
	})
	return out
}
