package sharefetch

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/share"
)

// acknowledge applies a member's acknowledgements to each partition and
// waits for their state writes; it returns each partition's code (Kafka's
// SharePartitionManager.acknowledge). Partitions are done concurrently.
func (m *Manager) acknowledge(ctx context.Context, group, member string, acks map[share.TopicIDPartition][]share.AckBatch, renew bool) map[share.TopicIDPartition]int16 {
	if len(acks) == 0 {
		return nil
	}
	out := make(map[share.TopicIDPartition]int16, len(acks))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for tip, batches := range acks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code := codeOf(m.acknowledgeOne(ctx, group, member, tip, batches, renew))
			mu.Lock()
			out[tip] = code
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// acknowledgeOne acknowledges batches of one partition and waits for the
// write that records them.
func (m *Manager) acknowledgeOne(ctx context.Context, group, member string, tip share.TopicIDPartition, batches []share.AckBatch, renew bool) error {
	if err := share.ValidateAckBatches(batches, renew); err != nil {
		return err
	}
	sp, err := m.partition(ctx, group, tip)
	if err != nil {
		return err
	}
	sp.mu.Lock()
	w, err := sp.p.Acknowledge(member, batches, m.opts.Clock.Now())
	var done <-chan error
	if err == nil && w != nil {
		done = sp.enqueueLocked(m, w)
	}
	sp.mu.Unlock()
	if err != nil || done == nil {
		if err == nil {
			m.notify() // a renewal or no-op may still free a waiting fetch
			// A renewal's new deadline is later than the one it replaces.
		}
		return err
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return kerr.RequestTimedOut
	}
}

// closeSession ends a member's share session and releases the records it
// holds on the session's partitions (Kafka's releaseSession); the releases
// are written in the background.
func (m *Manager) closeSession(ctx context.Context, key share.SessionKey) {
	m.mu.Lock()
	parts, ok := m.sessions.Close(key)
	m.mu.Unlock()
	if ok {
		m.release(ctx, key, parts)
	}
}

// release makes the records member holds on parts available again.
func (m *Manager) release(ctx context.Context, key share.SessionKey, parts []share.TopicIDPartition) {
	now := m.opts.Clock.Now()
	released := false
	for _, tip := range parts {
		m.mu.Lock()
		sp := m.parts[partKey{key.GroupID, tip}]
		m.mu.Unlock()
		if sp == nil {
			continue
		}
		sp.mu.Lock()
		if sp.p != nil {
			w, err := sp.p.ReleaseMember(key.MemberID, now)
			if err != nil {
				m.opts.Logger.Warn("release of a closed share session's records", "group", key.GroupID, "member", key.MemberID, "err", err)
			}
			if w != nil {
				sp.enqueueLocked(m, w)
				released = true
			}
		}
		sp.mu.Unlock()
	}
	if released {
		m.notify()
	}
}

// ConnectionClosed ends the share session opened on conn, releasing its
// member's records, as Kafka does when a share consumer's connection
// drops.
func (m *Manager) ConnectionClosed(conn string) {
	m.mu.Lock()
	key, parts, ok := m.sessions.Disconnect(conn)
	m.mu.Unlock()
	if ok {
		m.release(m.ctx, key, parts)
	}
}

// ShareAcknowledge serves a ShareAcknowledge whose group READ the caller
// authorized (Kafka's handleShareAcknowledgeRequest).
func (m *Manager) ShareAcknowledge(ctx context.Context, req *kmsg.ShareAcknowledgeRequest, topicAllowed func(string) bool) *kmsg.ShareAcknowledgeResponse {
	resp := req.ResponseKind().(*kmsg.ShareAcknowledgeResponse)
	resp.SetVersion(req.Version)
	group, member := deref(req.GroupID), deref(req.MemberID)
	fail := func(err error) *kmsg.ShareAcknowledgeResponse {
		resp.ErrorCode = codeOf(err)
		msg := err.Error()
		resp.ErrorMessage = &msg
		return resp
	}
	if group == "" || member == "" {
		return fail(kerr.InvalidRequest)
	}
	key := share.SessionKey{GroupID: group, MemberID: member}
	m.mu.Lock()
	final, err := m.sessions.ShareAcknowledge(key, req.ShareSessionEpoch)
	m.mu.Unlock()
	if err != nil {
		return fail(err)
	}
	codes := map[share.TopicIDPartition]int16{}
	acks := map[share.TopicIDPartition][]share.AckBatch{}
	im := m.opts.Image()
	for _, t := range req.Topics {
		_, code := topicName(im, t.TopicID, topicAllowed)
		for _, p := range t.Partitions {
			tip := share.TopicIDPartition{TopicID: t.TopicID, Partition: p.Partition}
			if code != 0 {
				codes[tip] = code
				continue
			}
			for _, b := range p.AcknowledgementBatches {
				acks[tip] = append(acks[tip], share.AckBatch{FirstOffset: b.FirstOffset, LastOffset: b.LastOffset, AcknowledgeTypes: b.AcknowledgeTypes})
			}
		}
	}
	for tip, code := range m.acknowledge(ctx, group, member, acks, req.Version >= 2 && req.IsRenewAck && m.opts.Group(group).RenewAcknowledge) {
		codes[tip] = code
	}
	if final {
		m.closeSession(ctx, key)
	}
	for _, tip := range sortedParts(codes) {
		n := len(resp.Topics)
		if n == 0 || resp.Topics[n-1].TopicID != tip.TopicID {
			t := kmsg.NewShareAcknowledgeResponseTopic()
			t.TopicID = tip.TopicID
			resp.Topics = append(resp.Topics, t)
			n++
		}
		p := kmsg.NewShareAcknowledgeResponseTopicPartition()
		p.Partition, p.ErrorCode = tip.Partition, codes[tip]
		resp.Topics[n-1].Partitions = append(resp.Topics[n-1].Partitions, p)
	}
	return resp
}
