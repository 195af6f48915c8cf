package controller

// Broker liveness as the active controller sees it: heartbeats unfence a
// broker once it has caught up with the metadata log, a broker silent for
// broker.session.timeout.ms is fenced, and a heartbeat asking to shut down
// moves leadership away first (controlled shutdown). Fencing and unfencing
// elect leaders among the live in-sync replicas; a partition with none left
// becomes leaderless (LEADER_NOT_AVAILABLE), never silently led elsewhere.

import (
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// BrokerHeartbeat computes the records and response of a BrokerHeartbeat.
// A fenced broker is unfenced once its metadata offset has reached its own
// registration (whose offset is its epoch - 1, see RegisterBroker), as
// Kafka's controller waits for a broker to catch up first.
func (c *Controller) BrokerHeartbeat(im *metadata.Image, req *kmsg.BrokerHeartbeatRequest) ([]metadata.Record, *kmsg.BrokerHeartbeatResponse) {
	resp := kmsg.NewPtrBrokerHeartbeatResponse()
	resp.Version = req.Version
	resp.IsFenced = true
	b, ok := im.Broker(req.BrokerID)
	if !ok {
		resp.ErrorCode = kerr.BrokerIDNotRegistered.Code
		return nil, resp
	}
	if b.Epoch != req.BrokerEpoch {
		resp.ErrorCode = kerr.StaleBrokerEpoch.Code
		return nil, resp
	}
	caughtUp := req.CurrentMetadataOffset >= b.Epoch-1
	resp.IsCaughtUp = caughtUp
	switch {
	case req.WantShutdown:
		resp.ShouldShutdown = true
		if b.Fenced {
			return nil, resp
		}
		return FenceBroker(im, req.BrokerID), resp
	case req.WantFence:
		if b.Fenced {
			return nil, resp
		}
		return FenceBroker(im, req.BrokerID), resp
	case b.Fenced && caughtUp:
		resp.IsFenced = false
		return UnfenceBroker(im, req.BrokerID), resp
	default:
		resp.IsFenced = b.Fenced
		return HandleDirectoriesOffline(im, req.BrokerID, b.Epoch, dirIDs(req.OfflineLogDirs)), resp
	}
}

// FenceBroker returns the records that fence a broker and move the
// leadership of every partition it leads to another live in-sync replica;
// the broker leaves the ISR of partitions that keep another member. A
// partition whose only in-sync replica it is keeps its ISR and loses its
// leader, as Kafka's controller does (no unclean election).
func FenceBroker(im *metadata.Image, id int32) []metadata.Record {
	b, ok := im.Broker(id)
	if !ok || b.Fenced {
		return nil
	}
	recs := []metadata.Record{&metadata.FenceBrokerRecord{BrokerID: id, BrokerEpoch: b.Epoch}}
	live := func(r int32) bool {
		if r == id {
			return false
		}
		o, ok := im.Broker(r)
		return ok && !o.Fenced
	}
	forEachPartition(im, func(topicID kafka.UUID, p int32, st metadata.PartitionState) {
		if !slices.Contains(st.ISR, id) {
			return
		}
		isr := slices.DeleteFunc(slices.Clone(st.ISR), func(r int32) bool { return r == id })
		if len(isr) == 0 {
			isr = st.ISR // the last in-sync replica stays in the ISR
		}
		leader := metadata.NoLeaderChange
		if st.Leader == id {
			// Clean election keeps isr; an unclean one (the topic allows
			// it and no in-sync replica is live) makes the new leader the
			// whole ISR.
			t, _ := im.TopicByID(topicID)
			unclean := t != nil && UncleanLeaderElectionEnabled(im, t.Name)
			leader, isr = ElectLeader(metadata.PartitionState{Replicas: st.Replicas, ISR: isr}, live, unclean)
		}
		if leader == metadata.NoLeaderChange && len(isr) == len(st.ISR) {
			return
		}
		recs = append(recs, &metadata.PartitionChangeRecord{TopicID: topicID, Partition: p, Leader: leader, ISR: isr})
	})
	return recs
}

// UnfenceBroker returns the records that unfence a broker and give it the
// leadership of leaderless partitions whose ISR holds it.
func UnfenceBroker(im *metadata.Image, id int32) []metadata.Record {
	b, ok := im.Broker(id)
	if !ok || !b.Fenced {
		return nil
	}
	recs := []metadata.Record{&metadata.UnfenceBrokerRecord{BrokerID: id, BrokerEpoch: b.Epoch}}
	forEachPartition(im, func(topicID kafka.UUID, p int32, st metadata.PartitionState) {
		if st.Leader == metadata.NoLeader && slices.Contains(st.ISR, id) {
			recs = append(recs, &metadata.PartitionChangeRecord{TopicID: topicID, Partition: p, Leader: id})
		}
	})
	return recs
}

// forEachPartition visits every partition of the image in topic name order.
func forEachPartition(im *metadata.Image, fn func(topicID kafka.UUID, p int32, st metadata.PartitionState)) {
	for _, name := range im.TopicNames() {
		t, ok := im.Topic(name)
		if !ok {
			continue
		}
		for _, p := range t.PartitionIDs() {
			fn(t.ID, p, t.Partitions[p])
		}
	}
}

// Sessions tracks the last heartbeat of each broker on the active
// controller. It lives in memory only: a new active controller starts every
// session afresh from its takeover, as Kafka's does. Safe for concurrent use.
type Sessions struct {
	timeout time.Duration

	mu    sync.Mutex
	since time.Time // the takeover: brokers not heard from yet count from here
	last  map[int32]Session
}

// Session is what the active controller last heard from a broker.
type Session struct {
	// Last is the time of the broker's last heartbeat.
	Last time.Time
	// MetadataOffset is the metadata offset the broker reported then.
	MetadataOffset int64
}

// NewSessions tracks sessions of the given timeout (broker.session.timeout.ms).
func NewSessions(timeout time.Duration) *Sessions {
	return &Sessions{timeout: timeout, last: map[int32]Session{}}
}

// Reset forgets every heartbeat: this controller became active at now.
func (s *Sessions) Reset(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.since, s.last = now, map[int32]Session{}
}

// Heard records a heartbeat of broker id at now, at the broker's metadata
// offset.
func (s *Sessions) Heard(id int32, now time.Time, metadataOffset int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last[id] = Session{Last: now, MetadataOffset: metadataOffset}
}

// Get returns what was last heard from broker id since the takeover.
func (s *Sessions) Get(id int32) (Session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.last[id]
	return v, ok
}

// Expired returns the unfenced brokers of the image not heard from for longer
// than the session timeout at now.
func (s *Sessions) Expired(im *metadata.Image, now time.Time) []int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int32
	for _, id := range im.BrokerIDs() {
		b, _ := im.Broker(id)
		if b.Fenced {
			continue
		}
		last := s.since
		if v, ok := s.last[id]; ok {
			last = v.Last
		}
		if now.Sub(last) > s.timeout {
			out = append(out, id)
		}
	}
	return out
}
