// Package sharefetch is the broker's share-partition manager (Kafka's
// SharePartitionManager with its DelayedShareFetch): it serves ShareFetch
// and ShareAcknowledge for the partitions this broker leads. It keeps a
// share.Partition per (group, partition), loaded from the share coordinator
// through a persister on first use; reads the log for acquisitions;
// writes every acknowledgement, release and lock expiry back through the
// persister, in order per partition, before answering; keeps the share
// sessions (share.SessionCache); and ends acquisition locks on a ticker.
//
// Differences from Kafka: a fetch that acquires nothing waits for appends
// to the partitions it reads at their ends, or for any share partition of
// this broker to change (an acknowledgement, a release, a lock expiry),
// rather than on per-partition keys; a share partition's state is reloaded
// from the share coordinator when its leader epoch changes, and dropped
// when this broker stops leading it.
package sharefetch

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/sluice-io/sluice/internal/broker/sharepersist"
	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/replication"
	"github.com/sluice-io/sluice/internal/share"
)

// Log reads partitions this broker leads; *replication.ReplicaManager
// implements it.
type Log interface {
	Fetch(ctx context.Context, params replication.FetchParams, parts []replication.FetchPartition) []replication.FetchPartitionResult
	ListOffset(tp kafka.TopicPartition, timestamp int64, iso replication.Isolation, currentLeaderEpoch int32, isClient bool) (replication.OffsetAnswer, error)
}

// Persister reads and writes share partitions' state in the share
// coordinator; *sharepersist.Persister implements it.
type Persister interface {
	Read(ctx context.Context, key sharepersist.Key, leaderEpoch int32) (sharepersist.State, error)
	Write(ctx context.Context, key sharepersist.Key, w sharepersist.Write) error
}

var (
	_ Log       = (*replication.ReplicaManager)(nil)
	_ Persister = (*sharepersist.Persister)(nil)
)

// GroupSettings are a share group's effective settings: its group configs
// over the broker's group.share.* defaults.
type GroupSettings struct {
	Partition share.Config
	// AutoOffsetReset is share.auto.offset.reset: where a share partition
	// without state starts.
	AutoOffsetReset config.ShareAutoOffsetReset
	// ReadCommitted is share.isolation.level=read_committed.
	ReadCommitted bool
	// RenewAcknowledge is share.renew.acknowledge.enable: renew
	// acknowledgements (ShareFetch and ShareAcknowledge v2) are taken.
	RenewAcknowledge bool
}

// DefaultGroupSettings are Kafka 4.4's defaults.
func DefaultGroupSettings() GroupSettings {
	return GroupSettings{Partition: share.DefaultConfig(), AutoOffsetReset: config.ShareAutoOffsetReset{Strategy: config.ResetLatest}, RenewAcknowledge: true}
}

// Options configure a Manager.
type Options struct {
	NodeID int32
	// Image returns the latest metadata image (topic ids, leaders).
	Image     func() *metadata.Image
	Log       Log
	Persister Persister
	// Group returns a group's settings; nil uses DefaultGroupSettings.
	Group func(groupID string) GroupSettings
	// MaxShareSessions is group.share.max.share.sessions (0: Kafka's 2000).
	MaxShareSessions int
	// Clock times locks, waits and expiry; nil is the real clock.
	Clock clock.Clock
	// ExpiryInterval is the longest the expiry loop sleeps (0: 100 ms); it
	// wakes sooner at the earliest lock deadline.
	ExpiryInterval time.Duration
	// WriteTimeout bounds one state write (0: 30 s, Kafka's
	// request.timeout.ms).
	WriteTimeout time.Duration
	Logger       *slog.Logger
}

// partKey names one share partition.
type partKey struct {
	group string
	tp    share.TopicIDPartition
}

// Manager serves share fetches and acknowledgements. It owns a goroutine
// (lock expiry) from New until Close.
type Manager struct {
	opts Options

	mu       sync.Mutex
	sessions *share.SessionCache
	parts    map[partKey]*sharePart
	// changed is closed, and replaced, when any share partition changed in
	// a way that may let a waiting fetch acquire records.
	changed chan struct{}
	// rearm tells the expiry loop a lock deadline may now be earlier than
	// the one it sleeps until (a new acquisition or renewal).
	rearm chan struct{}
	// wakeAt is when the expiry loop wakes next (guarded by mu): a new
	// lock deadline after it needs no re-arming, which is the usual case
	// since every lock of a group lasts as long.
	wakeAt time.Time

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

// New starts a Manager.
func New(opts Options) *Manager {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Group == nil {
		opts.Group = func(string) GroupSettings { return DefaultGroupSettings() }
	}
	if opts.MaxShareSessions <= 0 {
		opts.MaxShareSessions = share.DefaultMaxShareSessions
	}
	if opts.ExpiryInterval <= 0 {
		opts.ExpiryInterval = 100 * time.Millisecond
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = 30 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{
		opts: opts, sessions: share.NewSessionCache(opts.MaxShareSessions),
		parts: map[partKey]*sharePart{}, changed: make(chan struct{}), rearm: make(chan struct{}, 1),
		ctx: ctx, cancel: cancel, done: make(chan struct{}),
	}
	go m.expireLoop()
	return m
}

// Close stops the expiry loop and waits for it; writes under way end with
// their contexts.
func (m *Manager) Close() {
	m.cancel()
	<-m.done
}

// notify wakes the fetches waiting for a share partition to change.
func (m *Manager) notify() {
	m.mu.Lock()
	close(m.changed)
	m.changed = make(chan struct{})
	m.mu.Unlock()
}

// changedCh is the channel the next notify closes.
func (m *Manager) changedCh() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.changed
}

// expireLoop ends acquisition locks as they expire: it sleeps until the
// earliest lock deadline, at most ExpiryInterval, so a record comes back
// about when its lock runs out (Kafka arms a timer per acquisition).
func (m *Manager) expireLoop() {
	defer close(m.done)
	// idle: the last expiry at a past deadline ended no lock, so that
	// deadline must not be waited on again at once (no busy loop).
	idle := false
	for {
		wait := m.opts.ExpiryInterval
		if dl, ok := m.earliestDeadline(); ok && !idle {
			wait = min(wait, max(clock.Until(m.opts.Clock, dl), 0))
		}
		m.mu.Lock()
		m.wakeAt = m.opts.Clock.Now().Add(wait)
		m.mu.Unlock()
		t := m.opts.Clock.NewTimer(wait)
		select {
		case <-m.ctx.Done():
			t.Stop()
			return
		case <-m.rearm:
			t.Stop()
		case <-t.C():
			expired := m.expireAll()
			if expired {
				m.notify()
			}
			idle = !expired && wait == 0
		}
	}
}

// wakeExpiry has the expiry loop look at the deadlines again when a lock
// now ends before the loop would wake.
func (m *Manager) wakeExpiry(deadline time.Time) {
	m.mu.Lock()
	later := !deadline.Before(m.wakeAt)
	m.mu.Unlock()
	if later {
		return
	}
	select {
	case m.rearm <- struct{}{}:
	default:
	}
}

// earliestDeadline is the first lock deadline of the loaded share
// partitions.
func (m *Manager) earliestDeadline() (time.Time, bool) {
	var first time.Time
	found := false
	for _, sp := range m.loaded() {
		sp.mu.Lock()
		if sp.p != nil {
			if dl, ok := sp.p.NextDeadline(); ok && (!found || dl.Before(first)) {
				first, found = dl, true
			}
		}
		sp.mu.Unlock()
	}
	return first, found
}

// expireAll expires the locks of every loaded share partition; it reports
// whether any expired.
func (m *Manager) expireAll() bool {
	now := m.opts.Clock.Now()
	any := false
	for _, sp := range m.loaded() {
		sp.mu.Lock()
		var w *share.Write
		if sp.p != nil {
			if dl, ok := sp.p.NextDeadline(); ok && !now.Before(dl) {
				w = sp.p.Expire(now)
			}
		}
		if w != nil {
			any = true
			sp.enqueueLocked(m, w)
		}
		sp.mu.Unlock()
	}
	return any
}

// loaded returns the share partitions held now.
func (m *Manager) loaded() []*sharePart {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*sharePart, 0, len(m.parts))
	for _, sp := range m.parts {
		out = append(out, sp)
	}
	return out
}
