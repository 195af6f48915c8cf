package share

import (
	"math"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/kafka"
)

// The share-session epochs of ShareFetch and ShareAcknowledge (KIP-932,
// as KIP-227's fetch sessions): 0 opens a session, -1 closes it, others
// must be the session's next epoch.
const (
	InitialEpoch int32 = 0
	FinalEpoch   int32 = -1
)

// nextEpoch is the epoch after e (Kafka's ShareRequestMetadata.nextEpoch).
func nextEpoch(e int32) int32 {
	switch {
	case e < 0:
		return FinalEpoch
	case e == math.MaxInt32:
		return 1
	}
	return e + 1
}

// SessionKey names a share session: one per group member per broker.
type SessionKey struct{ GroupID, MemberID string }

// TopicIDPartition is a partition of a share session.
type TopicIDPartition struct {
	TopicID   kafka.UUID
	Partition int32
}

// session is one share session.
type session struct {
	epoch int32
	// parts are the session's partitions in the order they were added.
	// Invariant: no duplicates.
	parts []TopicIDPartition
	conn  string
}

// SessionCache holds the share sessions of a broker (Kafka's
// ShareSessionCache), at most group.share.max.share.sessions of them. It is
// not safe for concurrent use.
type SessionCache struct {
	max      int
	sessions map[SessionKey]*session
	byConn   map[string]SessionKey
}

// DefaultMaxShareSessions is group.share.max.share.sessions's default.
const DefaultMaxShareSessions = 2000

// NewSessionCache returns an empty cache holding at most maxSessions.
func NewSessionCache(maxSessions int) *SessionCache {
	return &SessionCache{max: maxSessions, sessions: map[SessionKey]*session{}, byConn: map[string]SessionKey{}}
}

// Len returns the number of sessions.
func (c *SessionCache) Len() int { return len(c.sessions) }

// FetchContext is what a ShareFetch's share-session fields resolve to.
type FetchContext struct {
	// Final is a ShareFetch with epoch -1: it acknowledges and fetches
	// nothing; the caller then calls Close to release the member's records.
	Final bool
	// New is a ShareFetch with epoch 0 that opened a session (replacing
	// any the member had; Kafka does not release the replaced session's
	// records, their locks expire).
	New bool
	// Partitions are the session's partitions after the request: what the
	// ShareFetch fetches from.
	Partitions []TopicIDPartition
}

// ShareFetch resolves a ShareFetch's session (Kafka's
// SharePartitionManager.newContext). Epoch 0 opens a session with the
// fetch's partitions, INVALID_REQUEST when it carries acknowledgements,
// SHARE_SESSION_LIMIT_REACHED when the cache is full. Epoch -1 needs the
// session, SHARE_SESSION_NOT_FOUND otherwise. Any other epoch needs the
// session (SHARE_SESSION_NOT_FOUND) at that epoch
// (INVALID_SHARE_SESSION_EPOCH); the session then adds the fetch's
// partitions, drops the forgotten ones and moves to its next epoch.
func (c *SessionCache) ShareFetch(key SessionKey, epoch int32, fetch, forget []TopicIDPartition, hasAcks bool, conn string) (FetchContext, error) {
	switch epoch {
	case FinalEpoch:
		s, ok := c.sessions[key]
		if !ok {
			return FetchContext{}, errf(kerr.ShareSessionNotFound, "share session of member %s of group %s", key.MemberID, key.GroupID)
		}
		return FetchContext{Final: true, Partitions: append([]TopicIDPartition(nil), s.parts...)}, nil
	case InitialEpoch:
		if hasAcks {
			return FetchContext{}, errf(kerr.InvalidRequest, "acknowledgements in the ShareFetch opening a share session")
		}
		c.remove(key)
		if len(c.sessions) >= c.max {
			return FetchContext{}, errf(kerr.ShareSessionLimitReached, "%d share sessions", len(c.sessions))
		}
		s := &session{epoch: nextEpoch(InitialEpoch), conn: conn}
		s.update(fetch, nil)
		c.sessions[key] = s
		c.byConn[conn] = key
		return FetchContext{New: true, Partitions: append([]TopicIDPartition(nil), s.parts...)}, nil
	}
	s, err := c.check(key, epoch)
	if err != nil {
		return FetchContext{}, err
	}
	s.update(fetch, forget)
	s.epoch = nextEpoch(s.epoch)
	return FetchContext{Partitions: append([]TopicIDPartition(nil), s.parts...)}, nil
}

// ShareAcknowledge checks a ShareAcknowledge's session (Kafka's
// acknowledgeSessionUpdate): epoch 0 is INVALID_SHARE_SESSION_EPOCH (it
// cannot open a session), the session must exist (SHARE_SESSION_NOT_FOUND),
// -1 is accepted as is (the caller then calls Close), any other epoch must
// be the session's and moves it on. It reports whether the epoch was -1.
func (c *SessionCache) ShareAcknowledge(key SessionKey, epoch int32) (final bool, err error) {
	if epoch == InitialEpoch {
		return false, errf(kerr.InvalidShareSessionEpoch, "ShareAcknowledge with epoch 0")
	}
	if epoch == FinalEpoch {
		if _, ok := c.sessions[key]; !ok {
			return false, errf(kerr.ShareSessionNotFound, "share session of member %s of group %s", key.MemberID, key.GroupID)
		}
		return true, nil
	}
	s, err := c.check(key, epoch)
	if err != nil {
		return false, err
	}
	s.epoch = nextEpoch(s.epoch)
	return false, nil
}

func (c *SessionCache) check(key SessionKey, epoch int32) (*session, error) {
	s, ok := c.sessions[key]
	if !ok {
		return nil, errf(kerr.ShareSessionNotFound, "share session of member %s of group %s", key.MemberID, key.GroupID)
	}
	if s.epoch != epoch {
		return nil, errf(kerr.InvalidShareSessionEpoch, "share session epoch %d, expected %d", epoch, s.epoch)
	}
	return s, nil
}

// Close removes the member's session after a request with epoch -1 (Kafka's
// releaseSession) and returns its partitions, on each of which the caller
// releases the member's records (Partition.ReleaseMember).
func (c *SessionCache) Close(key SessionKey) ([]TopicIDPartition, bool) {
	s, ok := c.sessions[key]
	if !ok {
		return nil, false
	}
	c.remove(key)
	return s.parts, true
}

// Disconnect removes the session opened on a client connection that
// closed; the caller releases the member's records on the returned
// partitions, as Kafka's share group listener does on member leave.
func (c *SessionCache) Disconnect(conn string) (SessionKey, []TopicIDPartition, bool) {
	key, ok := c.byConn[conn]
	if !ok {
		return SessionKey{}, nil, false
	}
	parts, ok := c.Close(key)
	return key, parts, ok
}

// Epoch returns the epoch the session expects next.
func (c *SessionCache) Epoch(key SessionKey) (int32, bool) {
	s, ok := c.sessions[key]
	if !ok {
		return 0, false
	}
	return s.epoch, true
}

func (c *SessionCache) remove(key SessionKey) {
	s, ok := c.sessions[key]
	if !ok {
		return
	}
	delete(c.sessions, key)
	if c.byConn[s.conn] == key {
		delete(c.byConn, s.conn)
	}
}

// update adds the fetched partitions the session lacks and drops the
// forgotten ones (Kafka's ShareSession.update).
func (s *session) update(fetch, forget []TopicIDPartition) {
	for _, tp := range fetch {
		if !containsTP(s.parts, tp) {
			s.parts = append(s.parts, tp)
		}
	}
	for _, tp := range forget {
		for i, have := range s.parts {
			if have == tp {
				s.parts = append(s.parts[:i:i], s.parts[i+1:]...)
				break
			}
		}
	}
}

func containsTP(parts []TopicIDPartition, tp TopicIDPartition) bool {
	for _, p := range parts {
		if p == tp {
			return true
		}
	}
	return false
}
