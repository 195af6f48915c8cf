package api

// Incremental fetch sessions (KIP-227), as Kafka's FetchManager and
// FetchSessionCache: a full fetch (epoch 0) may open a session holding the
// fetcher's partitions and what was last sent for each; later incremental
// fetches (epoch 1, 2, ...) name only the partitions that changed or are
// forgotten, and the answer carries only partitions with news (records, a
// changed high watermark or log start offset, an error, a diverging epoch).
// Epoch -1 closes the session. The cache is bounded by
// max.incremental.fetch.session.cache.slots; when full, a stale session
// (unused for min.incremental.fetch.session.eviction.ms) or a less valuable
// one (not a follower's, fewer partitions) is evicted for a new one, else
// the fetch runs without a session (session id 0), as in Kafka.

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/kafka"
)

// Kafka's fetch session metadata sentinels.
const (
	invalidSessionID int32 = 0
	initialEpoch     int32 = 0
	finalEpoch       int32 = -1
)

// defaultFetchSessionEviction is Kafka's
// min.incremental.fetch.session.eviction.ms.
const defaultFetchSessionEviction = 120 * time.Second

// sessionKey names a partition in a session: by topic id from Fetch v13, by
// name before (the other field is zero).
type sessionKey struct {
	ID        kafka.UUID
	Name      string
	Partition int32
}

// sessionPartition is one partition's fetch state: what the fetcher asked
// for, and what the broker last told it.
type sessionPartition struct {
	key sessionKey
	// name is the topic name the key resolves to now ("" when unknown).
	name               string
	fetchOffset        int64
	currentLeaderEpoch int32
	lastFetchedEpoch   int32
	maxBytes           int32
	// highWatermark and logStartOffset were last sent to the fetcher; -1
	// forces the next answer to include the partition.
	highWatermark  int64
	logStartOffset int64
}

// partitionOutcome is what a fetch produced for one partition, as far as
// the session cares.
type partitionOutcome struct {
	highWatermark  int64
	logStartOffset int64
	hasRecords     bool
	failed         bool
	diverging      bool
}

type fetchSession struct {
	id           int32
	epoch        int32
	privileged   bool
	usesTopicIDs bool
	lastUsed     time.Time
	// partitions are in answer order (those that last returned records at
	// the back); byKey finds them: a follower's or a consumer's session may
	// hold 10,000 partitions, and a linear search per partition per fetch
	// took 62% of a broker's CPU (issue 24). Kafka keys them alike
	// (ImplicitLinkedHashCollection).
	// Invariant: byKey holds exactly the partitions of partitions, by key.
	partitions []*sessionPartition
	byKey      map[sessionKey]*sessionPartition
}

func newFetchSession(id, epoch int32, privileged, usesTopicIDs bool, now time.Time) *fetchSession {
	return &fetchSession{id: id, epoch: epoch, privileged: privileged, usesTopicIDs: usesTopicIDs, lastUsed: now,
		byKey: map[sessionKey]*sessionPartition{}}
}

func (s *fetchSession) find(k sessionKey) *sessionPartition { return s.byKey[k] }

// add appends sp; a key already present (named twice in one request) is
// updated in place instead.
func (s *fetchSession) add(sp *sessionPartition) {
	if old := s.byKey[sp.key]; old != nil {
		*old = *sp
		return
	}
	s.partitions = append(s.partitions, sp)
	s.byKey[sp.key] = sp
}

// forget removes the partitions of keys, in one pass over the session.
func (s *fetchSession) forget(keys []sessionKey) {
	if len(keys) == 0 {
		return // most incremental fetches forget nothing: no set to build
	}
	gone := make(map[*sessionPartition]bool, len(keys))
	for _, k := range keys {
		if sp := s.byKey[k]; sp != nil {
			gone[sp] = true
			delete(s.byKey, k)
		}
	}
	if len(gone) > 0 {
		s.partitions = slices.DeleteFunc(s.partitions, func(p *sessionPartition) bool { return gone[p] })
	}
}

// toBack moves the partitions of moved (in their order) behind the others.
func (s *fetchSession) toBack(moved []*sessionPartition) {
	set := make(map[*sessionPartition]bool, len(moved))
	for _, p := range moved {
		set[p] = true
	}
	s.partitions = slices.DeleteFunc(s.partitions, func(p *sessionPartition) bool { return set[p] })
	s.partitions = append(s.partitions, moved...)
}

// fetchContext is how one fetch request uses the session cache.
type fetchContext struct {
	// errCode is a session error (FETCH_SESSION_ID_NOT_FOUND,
	// INVALID_FETCH_SESSION_EPOCH, FETCH_SESSION_TOPIC_ID_ERROR): the answer
	// is that error alone.
	errCode int16
	// parts are the partitions to fetch, in order (copies).
	parts []sessionPartition
	// incremental names the session being continued; newSession says a
	// full fetch may open one.
	incremental  *fetchSession
	newSession   bool
	privileged   bool
	usesTopicIDs bool
}

// fetchSessionCache holds the sessions of all connections; one per broker.
type fetchSessionCache struct {
	slots    int
	eviction time.Duration
	clk      clock.Clock

	mu       sync.Mutex
	sessions map[int32]*fetchSession
}

func newFetchSessionCache(slots int, eviction time.Duration, clk clock.Clock) *fetchSessionCache {
	if slots < 0 {
		slots = 0
	}
	if eviction <= 0 {
		eviction = defaultFetchSessionEviction
	}
	return &fetchSessionCache{slots: slots, eviction: eviction, clk: clk, sessions: make(map[int32]*fetchSession)}
}

// newContext interprets a request's session id and epoch (Kafka's
// FetchManager.newContext). reqParts are the request's partitions, forgotten
// its forgotten topics' partitions.
func (c *fetchSessionCache) newContext(sessionID, epoch int32, usesTopicIDs, privileged bool, reqParts []sessionPartition, forgotten []sessionKey) fetchContext {
	c.mu.Lock()
	defer c.mu.Unlock()
	if epoch == initialEpoch || epoch == finalEpoch {
		// A full fetch closes the session it names.
		if sessionID != invalidSessionID {
			delete(c.sessions, sessionID)
		}
		return fetchContext{parts: reqParts, newSession: epoch == initialEpoch, privileged: privileged, usesTopicIDs: usesTopicIDs}
	}
	s, ok := c.sessions[sessionID]
	if !ok {
		return fetchContext{errCode: kerr.FetchSessionIDNotFound.Code}
	}
	if s.epoch != epoch {
		return fetchContext{errCode: kerr.InvalidFetchSessionEpoch.Code}
	}
	if s.usesTopicIDs != usesTopicIDs {
		return fetchContext{errCode: kerr.FetchSessionTopicIDError.Code}
	}
	for _, rp := range reqParts {
		if sp := s.find(rp.key); sp != nil {
			// An update keeps what was last sent, so only news is answered.
			rp.highWatermark, rp.logStartOffset = sp.highWatermark, sp.logStartOffset
			*sp = rp
		} else {
			added := rp
			s.add(&added)
		}
	}
	s.forget(forgotten)
	if len(s.partitions) == 0 {
		delete(c.sessions, s.id)
		return fetchContext{parts: nil}
	}
	s.lastUsed = c.clk.Now()
	s.epoch = nextSessionEpoch(s.epoch)
	parts := make([]sessionPartition, len(s.partitions))
	for i, p := range s.partitions {
		parts[i] = *p
	}
	return fetchContext{parts: parts, incremental: s, privileged: privileged, usesTopicIDs: usesTopicIDs}
}

// complete records a fetch's outcomes in the session and decides which
// partitions the answer includes. It returns the session id to answer with
// (0 without a session).
func (c *fetchSessionCache) complete(fc *fetchContext, outcomes []partitionOutcome) (int32, []bool) {
	include := make([]bool, len(fc.parts))
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case fc.incremental != nil:
		s := fc.incremental
		var moved []*sessionPartition
		for i, part := range fc.parts {
			sp := s.find(part.key)
			if sp == nil {
				// Forgotten by a concurrent request: still answer it.
				include[i] = true
				continue
			}
			include[i] = mustRespond(sp, outcomes[i])
			if outcomes[i].hasRecords {
				moved = append(moved, sp)
			}
		}
		// Partitions that returned data go to the back, so the others get
		// their turn at the response size limit (as Kafka rotates them).
		if len(moved) > 0 {
			s.toBack(moved)
		}
		return s.id, include
	case fc.newSession && len(fc.parts) > 0:
		for i := range include {
			include[i] = true
		}
		now := c.clk.Now()
		if !c.makeRoom(fc.privileged, len(fc.parts), now) {
			return invalidSessionID, include
		}
		s := newFetchSession(c.newID(), nextSessionEpoch(initialEpoch), fc.privileged, fc.usesTopicIDs, now)
		for i := range fc.parts {
			sp := fc.parts[i]
			mustRespond(&sp, outcomes[i])
			s.add(&sp)
		}
		c.sessions[s.id] = s
		return s.id, include
	default:
		for i := range include {
			include[i] = true
		}
		return invalidSessionID, include
	}
}

// mustRespond is Kafka's CachedPartition.maybeUpdateResponseData: it
// records what the answer tells the fetcher and reports whether the
// partition has news for it.
func mustRespond(sp *sessionPartition, o partitionOutcome) bool {
	must := o.hasRecords || o.diverging
	if sp.highWatermark != o.highWatermark {
		must = true
		sp.highWatermark = o.highWatermark
	}
	if sp.logStartOffset != o.logStartOffset {
		must = true
		sp.logStartOffset = o.logStartOffset
	}
	if o.failed {
		// Re-send the partition once the error goes away.
		sp.highWatermark = -1
		must = true
	}
	return must
}

// makeRoom reports whether a new session of size partitions fits, evicting
// a stale session or a less valuable one if needed (Kafka's tryEvict).
func (c *fetchSessionCache) makeRoom(privileged bool, size int, now time.Time) bool {
	if c.slots == 0 {
		return false
	}
	if len(c.sessions) < c.slots {
		return true
	}
	var oldest, cheapest *fetchSession
	for _, s := range c.sessions {
		if oldest == nil || s.lastUsed.Before(oldest.lastUsed) {
			oldest = s
		}
		if privileged && s.privileged {
			continue // a follower's session can only evict consumers'
		}
		if cheapest == nil || lessValuable(s, cheapest) {
			cheapest = s
		}
	}
	if now.Sub(oldest.lastUsed) > c.eviction {
		delete(c.sessions, oldest.id)
		return true
	}
	if cheapest == nil {
		return false
	}
	candidate := &fetchSession{privileged: privileged, partitions: make([]*sessionPartition, size), id: math.MaxInt32}
	if lessValuable(candidate, cheapest) {
		return false
	}
	delete(c.sessions, cheapest.id)
	return true
}

// lessValuable orders sessions for eviction: consumers' before followers',
// then fewer partitions, then lower id (Kafka's EvictableKey).
func lessValuable(a, b *fetchSession) bool {
	if a.privileged != b.privileged {
		return !a.privileged
	}
	if len(a.partitions) != len(b.partitions) {
		return len(a.partitions) < len(b.partitions)
	}
	return a.id < b.id
}

func (c *fetchSessionCache) newID() int32 {
	for {
		id := rand.Int32N(math.MaxInt32-1) + 1
		if _, taken := c.sessions[id]; !taken {
			return id
		}
	}
}

// size returns the number of open sessions (tests, metrics).
func (c *fetchSessionCache) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sessions)
}

// nextSessionEpoch is Kafka's FetchMetadata.nextEpoch: it wraps to 1.
func nextSessionEpoch(e int32) int32 {
	if e < 0 {
		return e
	}
	if e == math.MaxInt32 {
		return 1
	}
	return e + 1
}
