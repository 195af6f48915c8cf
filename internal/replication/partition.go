package replication

import (
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// Role is what this broker is for a partition.
type Role int8

const (
	// RoleNone: the partition is hosted but its state is not known yet.
	RoleNone Role = iota
	RoleLeader
	RoleFollower
)

func (r Role) String() string {
	switch r {
	case RoleLeader:
		return "leader"
	case RoleFollower:
		return "follower"
	}
	return "none"
}

// followerState is what the leader knows of one follower replica: the log
// end offset it last fetched from, and since when it has been caught up.
type followerState struct {
	logEndOffset int64
	// brokerEpoch is the follower's broker epoch from its last fetch
	// (KIP-903), -1 unknown.
	brokerEpoch int64
	// lastCaughtUpMs is the last time the follower was known to hold
	// everything the leader had (replica.lag.time.max.ms decides ISR
	// shrinking). As Kafka's, a fetch at or past the leader's log end offset
	// of the previous fetch proves it caught up as of that previous fetch,
	// so a follower keeping pace with a busy leader stays in sync.
	lastCaughtUpMs int64
	// lastFetchLeaderLogEndOffset and lastFetchMs are the leader's log end
	// offset and the time at the follower's previous fetch.
	lastFetchLeaderLogEndOffset int64
	lastFetchMs                 int64
}

// Partition is one partition hosted by this broker: its log, its leader
// epoch cache and the replication state (role, leader epoch, ISR, high
// watermark, follower states).
//
// Lock order: Partition.mu, then the log's own lock (taken inside
// commitlog.Log calls), then the epoch cache's. Leader appends hold mu so the
// leader epoch they stamp cannot change underneath them, as Kafka's
// leaderIsrUpdateLock does; reads hold it only to snapshot the bounds.
type Partition struct {
	tp       kafka.TopicPartition
	topicID  kafka.UUID
	brokerID int32
	log      *commitlog.Log
	clk      clock.Clock
	logger   *slog.Logger
	// settings is the topic's configuration, replaced as it changes
	// (never nil once the partition is hosted).
	settings atomic.Pointer[TopicSettings]
	// metrics is what the hot paths count into, set when the partition
	// is hosted (nil until then: not counted).
	metrics *partitionMetrics

	mu struct {
		sync.Mutex
		role           Role
		leaderID       int32
		leaderEpoch    int32
		partitionEpoch int32
		replicas       []int32
		isr            []int32
		// leaderEpochStartOffset is the log end offset when this broker
		// became leader: until the high watermark reaches it, client
		// ListOffsets answer OFFSET_NOT_AVAILABLE (as Kafka).
		leaderEpochStartOffset int64
		highWatermark          int64
		followers              map[int32]*followerState
		// pendingISR is the ISR of an AlterPartition in flight (nil when
		// none): only one is sent at a time, and until the controller's
		// answer arrives in the metadata the high watermark counts the
		// larger of the two sets (Kafka's "maximal ISR"), so a shrink that
		// may not commit never lets it advance early.
		pendingISR []int32
		// caughtUp is the follower's isReplicaInSync: its last fetch
		// reached the leader's high watermark (Kafka's fetcher lag <= 0).
		// False until a fetch under the current leader epoch shows it, as
		// a new PartitionFetchState's lag is unknown.
		caughtUp bool
	}
}

// TopicConfig is the topic's data-plane configuration as last pushed.
func (p *Partition) TopicConfig() TopicConfig { return p.settings.Load().Data }

// setSettings takes the topic's new configuration, handing the log its
// options.
func (p *Partition) setSettings(s *TopicSettings) {
	p.settings.Store(s)
	p.log.SetOptions(s.Log)
}

func newPartition(tp kafka.TopicPartition, topicID kafka.UUID, brokerID int32, log *commitlog.Log, clk clock.Clock, logger *slog.Logger) *Partition {
	p := &Partition{tp: tp, topicID: topicID, brokerID: brokerID, log: log, clk: clk,
		logger: logger.With("partition", tp.String())}
	d := DefaultTopicSettings()
	p.settings.Store(&d)
	p.mu.leaderID = metadata.NoLeader
	p.mu.leaderEpoch = kafka.NoEpoch
	p.mu.followers = make(map[int32]*followerState)
	// The high watermark starts at the log start offset unless a
	// checkpoint says more (HighWatermarkSource); a sole in-sync leader
	// raises it to its log end offset at once.
	p.mu.highWatermark = log.LogStartOffset()
	return p
}

// restoreHighWatermark starts the high watermark at a checkpointed value,
// kept within the log's offsets.
func (p *Partition) restoreHighWatermark(hw int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	hw = max(p.log.LogStartOffset(), min(hw, p.log.LogEndOffset()))
	p.mu.highWatermark = hw
	p.log.SetHighWatermark(hw)
}

// TopicPartition returns the partition's name.
func (p *Partition) TopicPartition() kafka.TopicPartition { return p.tp }

// TopicID returns the partition's topic id.
func (p *Partition) TopicID() kafka.UUID { return p.topicID }

// Log returns the partition's log (DescribeLogDirs, coordinators).
func (p *Partition) Log() *commitlog.Log { return p.log }

// State is a snapshot of the partition's replication state.
type State struct {
	Role           Role
	LeaderID       int32
	LeaderEpoch    int32
	PartitionEpoch int32
	Replicas       []int32
	ISR            []int32
	HighWatermark  int64
	LogStartOffset int64
	LogEndOffset   int64
	// LastStableOffset is min(high watermark, first unstable offset).
	LastStableOffset int64
}

// State returns a snapshot of the partition's replication state.
func (p *Partition) State() State {
	p.mu.Lock()
	defer p.mu.Unlock()
	return State{
		Role: p.mu.role, LeaderID: p.mu.leaderID, LeaderEpoch: p.mu.leaderEpoch,
		PartitionEpoch: p.mu.partitionEpoch,
		Replicas:       slices.Clone(p.mu.replicas), ISR: slices.Clone(p.mu.isr),
		HighWatermark: p.mu.highWatermark, LogStartOffset: p.log.LogStartOffset(),
		LogEndOffset: p.log.LogEndOffset(), LastStableOffset: p.lastStableOffsetLocked(),
	}
}

// HighWatermark returns the high watermark.
func (p *Partition) HighWatermark() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.highWatermark
}

// applyState makes the partition leader or follower as the metadata image
// describes it. It reports whether the high watermark moved.
func (p *Partition) applyState(st metadata.PartitionState) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st.LeaderEpoch < p.mu.leaderEpoch || (st.LeaderEpoch == p.mu.leaderEpoch && st.PartitionEpoch < p.mu.partitionEpoch) {
		// An image older than what this partition has seen (a restart's
		// replay racing a delta): never go back.
		return false, nil
	}
	if st.PartitionEpoch != p.mu.partitionEpoch {
		// The controller decided: whatever AlterPartition was in flight is
		// answered by this state.
		p.mu.pendingISR = nil
	}
	p.mu.replicas = slices.Clone(st.Replicas)
	p.mu.isr = slices.Clone(st.ISR)
	p.mu.partitionEpoch = st.PartitionEpoch
	newEpoch := st.LeaderEpoch != p.mu.leaderEpoch || st.Leader != p.mu.leaderID
	p.mu.leaderID = st.Leader
	p.mu.leaderEpoch = st.LeaderEpoch
	if st.Leader != p.brokerID {
		if p.mu.role != RoleFollower || newEpoch {
			p.logger.Debug("became follower", "leader", st.Leader, "leader_epoch", st.LeaderEpoch)
			p.mu.caughtUp = false
		}
		p.mu.role = RoleFollower
		p.mu.followers = make(map[int32]*followerState)
		p.mu.pendingISR = nil
		return false, nil
	}
	nowMs := p.clk.Now().UnixMilli()
	if p.mu.role != RoleLeader || newEpoch {
		// The new epoch starts at the log end offset: its first batch
		// records it in the log's epoch cache, and until then the previous
		// epoch ends here, which is what OffsetForLeaderEpoch must answer.
		leo := p.log.LogEndOffset()
		p.mu.leaderEpochStartOffset = leo
		p.mu.followers = make(map[int32]*followerState)
		p.mu.pendingISR = nil
		p.logger.Debug("became leader", "leader_epoch", st.LeaderEpoch, "log_end_offset", leo, "isr", p.mu.isr)
	}
	for _, r := range p.mu.replicas {
		if _, ok := p.mu.followers[r]; !ok && r != p.brokerID {
			// As Kafka, a follower starts out caught up as of now, so a new
			// leader does not shrink its ISR before anyone could fetch.
			p.mu.followers[r] = &followerState{logEndOffset: kafka.NoOffset, brokerEpoch: -1, lastCaughtUpMs: nowMs,
				lastFetchLeaderLogEndOffset: kafka.NoOffset, lastFetchMs: nowMs}
		}
	}
	p.mu.role = RoleLeader
	return p.maybeIncrementHighWatermarkLocked(), nil
}

// maybeIncrementHighWatermarkLocked raises the high watermark to the
// smallest log end offset among the in-sync replicas (the leader's own is
// its log's). It never moves it back. It reports whether it moved.
func (p *Partition) maybeIncrementHighWatermarkLocked() bool {
	if p.mu.role != RoleLeader {
		return false
	}
	hw := p.log.LogEndOffset()
	for _, r := range bugISR(p.maximalISRLocked()) {
		if r == p.brokerID {
			continue
		}
		f, ok := p.mu.followers[r]
		if !ok || f.logEndOffset < 0 {
			// A follower whose position is unknown holds the watermark.
			return false
		}
		hw = min(hw, f.logEndOffset)
	}
	if hw <= p.mu.highWatermark {
		return false
	}
	p.mu.highWatermark = hw
	p.log.SetHighWatermark(hw)
	return true
}

// maximalISRLocked is the ISR the high watermark must wait for: the
// current one plus any member an AlterPartition in flight would add.
func (p *Partition) maximalISRLocked() []int32 {
	isr := p.mu.isr
	for _, r := range p.mu.pendingISR {
		if !slices.Contains(isr, r) {
			isr = append(slices.Clone(isr), r)
		}
	}
	return isr
}

// lastStableOffsetLocked is min(high watermark, first unstable offset).
func (p *Partition) lastStableOffsetLocked() int64 {
	if first, ok := p.log.FirstUnstableOffset(); ok && first < p.mu.highWatermark {
		return first
	}
	return p.mu.highWatermark
}

// checkLeaderLocked answers a client request that must reach the leader
// with the request's current leader epoch (KIP-320; -1 skips the check).
// requireLeader false lets a follower answer (follower fetching, KIP-392).
func (p *Partition) checkLeaderLocked(currentLeaderEpoch int32, requireLeader bool) error {
	if err := p.log.OfflineErr(); err != nil {
		return fmt.Errorf("partition %s: %w: %w", p.tp, kerr.KafkaStorageError, err)
	}
	if currentLeaderEpoch != kafka.NoEpoch {
		if currentLeaderEpoch < p.mu.leaderEpoch {
			return fmt.Errorf("partition %s: request epoch %d below leader epoch %d: %w",
				p.tp, currentLeaderEpoch, p.mu.leaderEpoch, kerr.FencedLeaderEpoch)
		}
		if currentLeaderEpoch > p.mu.leaderEpoch {
			return fmt.Errorf("partition %s: request epoch %d above leader epoch %d: %w",
				p.tp, currentLeaderEpoch, p.mu.leaderEpoch, kerr.UnknownLeaderEpoch)
		}
	}
	if requireLeader && p.mu.role != RoleLeader {
		return fmt.Errorf("partition %s: broker %d is not the leader: %w", p.tp, p.brokerID, kerr.NotLeaderForPartition)
	}
	return nil
}
