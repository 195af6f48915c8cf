// Package replication is the data plane of a broker: the ReplicaManager
// hosts the partitions this broker leads or follows (as the metadata image
// says), appends produced records to leaders, answers fetches with long polls
// in a purgatory, and keeps each partition's leader epoch, ISR and high
// watermark.
//
// Followers: fetcher goroutines, num.replica.fetchers per source broker,
// pull from leaders with the Kafka Fetch API over a Transport (KafkaTransport
// on the wire, LocalTransport in process), append the leader's batches as
// they are, take its high watermark and log start offset, and truncate where
// their log diverged (the Fetch response's diverging epoch, Kafka's
// getOffsetTruncationState; ListOffsets after OFFSET_OUT_OF_RANGE). The
// leader tracks each follower's log end offset and when it last caught up,
// advances the high watermark to the smallest log end offset of the ISR
// (plus any member an ISR change in flight would add), and asks the
// controller through an AlterPartitionSender to drop followers lagging more
// than replica.lag.time.max.ms and to add back those that caught up; the
// change takes effect when its metadata arrives.
//
// Transactions: with a TxnVerifier (Options.Verifier) a client's first
// transactional batch of a producer on a partition is verified with the
// transaction coordinator before it is appended (KIP-890); coordinators
// append with AppendOriginCoordinator (no sequence checks, no
// verification); AppendTxnMarkers writes COMMIT/ABORT markers as leader and
// answers once the high watermark passes them; read_committed reads stop at
// the last stable offset with the aborted transactions of what they return;
// followers replay markers like any batch, so their last stable offset is
// the leader's; ActiveProducers answers DescribeProducers.
//
// Wiring: NewReplicaManager with a LogProvider over the log dirs and
// ReplicationOptions; ApplyImage with the image loaded at start-up, then
// ApplyDelta as a metadata Subscriber (both start and stop fetchers as
// leadership moves); Close before the logs are closed (it stops the
// fetchers and ISR loops and wakes parked requests).
//
// Lock order: ReplicaManager.mu is never held across a call into a
// Partition or a log; Partition.mu, then the log's lock, then the epoch
// cache's (the log's own: Partition keeps no second copy). The replica
// runtime's mutex is never held across a call into a Partition, a
// transport or the AlterPartition sender.
package replication

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/purgatory"
	"github.com/sluice-io/sluice/internal/vfs"
)

// LogProvider gets, creates and deletes partition logs. The node implements
// it over the commitlog Manager (log dirs, checkpoints), so this package does
// not depend on that API.
type LogProvider interface {
	// GetOrCreateLog opens the partition's log, creating it when absent,
	// with its topic's log options.
	GetOrCreateLog(tp kafka.TopicPartition, topicID kafka.UUID, opts commitlog.Options) (*commitlog.Log, error)
	// DeleteLog removes the partition's log (topic deleted, or the broker
	// is no longer a replica).
	DeleteLog(tp kafka.TopicPartition) error
}

// HighWatermarkSource may also be implemented by a LogProvider: it returns
// the high watermark checkpointed at the last stop
// (replication-offset-checkpoint), so a leader with followers does not
// start from the log start offset while they catch up.
type HighWatermarkSource interface {
	CheckpointedHighWatermark(tp kafka.TopicPartition) (int64, bool)
}

// Options configure a ReplicaManager.
type Options struct {
	// BrokerID is this broker's node id.
	BrokerID int32
	// FS is the file system of the log dirs; each partition's
	// leader-epoch-checkpoint is opened through it beside its log.
	FS   vfs.FS
	Logs LogProvider
	// DefaultSettings are a topic's settings until UpdateTopicSettings
	// gives its own (the zero value means DefaultTopicSettings).
	DefaultSettings *TopicSettings
	// Clock times appends, ISR lag, fetcher backoffs and the produce and
	// fetch waits; nil is the real clock.
	Clock  clock.Clock
	Logger *slog.Logger
	// Replication configures followers and ISR changes; its zero value
	// suits a broker whose partitions have no other replica.
	Replication ReplicationOptions
	// Verifier verifies clients' transactional batches with the
	// transaction coordinator (KIP-890, Kafka's
	// transaction.partition.verification.enable); nil turns verification
	// off: transactional batches are appended unchecked, as Kafka does with
	// it disabled.
	Verifier TxnVerifier
	// VerifyRetry is how the broker rides out CONCURRENT_TRANSACTIONS
	// on Transactions V2's implicit add; the zero value is Kafka's
	// defaults.
	VerifyRetry VerificationRetry
}

// ReplicaManager owns this broker's partitions.
type ReplicaManager struct {
	opts   Options
	logger *slog.Logger
	image  atomic.Pointer[metadata.Image]

	mu struct {
		sync.RWMutex
		partitions map[kafka.TopicPartition]*Partition
		// failed holds partitions whose log could not be opened: they
		// answer KAFKA_STORAGE_ERROR while others go on.
		failed map[kafka.TopicPartition]error
		// settings holds each topic's resolved configuration, pushed by
		// the broker as metadata changes it.
		settings map[string]*TopicSettings
	}

	// produceWaits holds acks=all produces until the high watermark passes
	// them; fetchWaits holds long-polling fetches until data arrives. Both
	// are keyed by partition.
	produceWaits *purgatory.Purgatory[kafka.TopicPartition]
	fetchWaits   *purgatory.Purgatory[kafka.TopicPartition]

	// replicas runs the follower fetchers and the ISR loops.
	replicas *replicaRuntime

	// metrics are the counters the collectors read (metrics_*.go).
	metrics *managerMetrics
}

// NewReplicaManager builds a ReplicaManager hosting nothing yet; ApplyImage
// or ApplyDelta make it host partitions. Close stops its purgatories.
func NewReplicaManager(opts Options) (*ReplicaManager, error) {
	if opts.Logs == nil || opts.FS == nil {
		return nil, fmt.Errorf("replication: Options.Logs and Options.FS are required")
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.VerifyRetry == (VerificationRetry{}) {
		opts.VerifyRetry = DefaultVerificationRetry()
	}
	if opts.DefaultSettings == nil {
		d := DefaultTopicSettings()
		opts.DefaultSettings = &d
	}
	rm := &ReplicaManager{
		opts:         opts,
		logger:       opts.Logger.With("component", "replica-manager"),
		produceWaits: purgatory.New[kafka.TopicPartition](purgatory.WithClock(opts.Clock)),
		fetchWaits:   purgatory.New[kafka.TopicPartition](purgatory.WithClock(opts.Clock)),
		metrics:      newManagerMetrics(),
	}
	rm.image.Store(metadata.EmptyImage())
	rm.mu.partitions = make(map[kafka.TopicPartition]*Partition)
	rm.mu.failed = make(map[kafka.TopicPartition]error)
	rm.mu.settings = make(map[string]*TopicSettings)
	rm.replicas = newReplicaRuntime(rm)
	rm.replicas.start()
	return rm, nil
}

// Close stops the follower fetchers and ISR loops, wakes every parked
// request with an error and stops the purgatories. The logs belong to the
// LogProvider, which closes them.
func (rm *ReplicaManager) Close() {
	rm.replicas.stop()
	rm.produceWaits.Close()
	rm.fetchWaits.Close()
}

// PurgatorySizes returns how many acks=all produces and long-polling
// fetches are parked (Kafka's PurgatorySize metric; tests wait on it).
func (rm *ReplicaManager) PurgatorySizes() (produce, fetch int) {
	return rm.produceWaits.Waiting(), rm.fetchWaits.Waiting()
}

// Image returns the latest metadata image the manager applied.
func (rm *ReplicaManager) Image() *metadata.Image { return rm.image.Load() }

// UpdateTopicSettings sets topics' resolved configurations: their hosted
// partitions and their logs take them now, partitions created later at
// creation. One call covers any number of topics with one pass over the
// partitions.
func (rm *ReplicaManager) UpdateTopicSettings(settings map[string]TopicSettings) {
	if len(settings) == 0 {
		return
	}
	type update struct {
		p *Partition
		s *TopicSettings
	}
	var updates []update
	rm.mu.Lock()
	for topic, s := range settings {
		rm.mu.settings[topic] = &s
	}
	for tp, p := range rm.mu.partitions {
		if s, ok := rm.mu.settings[tp.Topic]; ok {
			if _, changed := settings[tp.Topic]; changed {
				updates = append(updates, update{p, s})
			}
		}
	}
	rm.mu.Unlock()
	for _, u := range updates {
		u.p.setSettings(u.s)
	}
}

// ForgetTopicSettings drops deleted topics' configurations.
func (rm *ReplicaManager) ForgetTopicSettings(topics ...string) {
	rm.mu.Lock()
	for _, t := range topics {
		delete(rm.mu.settings, t)
	}
	rm.mu.Unlock()
}

// topicSettings is a topic's configuration, or the defaults.
func (rm *ReplicaManager) topicSettings(topic string) *TopicSettings {
	rm.mu.RLock()
	defer rm.mu.RUnlock()
	if s, ok := rm.mu.settings[topic]; ok {
		return s
	}
	return rm.opts.DefaultSettings
}

// Partition returns a hosted partition. The error is UNKNOWN_TOPIC_OR_PARTITION
// when the metadata does not know it, NOT_LEADER_OR_FOLLOWER when this broker
// does not host it, KAFKA_STORAGE_ERROR when its log could not be opened.
func (rm *ReplicaManager) Partition(tp kafka.TopicPartition) (*Partition, error) {
	rm.mu.RLock()
	p, ok := rm.mu.partitions[tp]
	failed := rm.mu.failed[tp]
	rm.mu.RUnlock()
	if ok {
		return p, nil
	}
	if failed != nil {
		return nil, fmt.Errorf("partition %s: %v: %w", tp, failed, kerr.KafkaStorageError)
	}
	if _, known := rm.image.Load().Partition(tp); !known {
		return nil, fmt.Errorf("partition %s: %w", tp, kerr.UnknownTopicOrPartition)
	}
	return nil, fmt.Errorf("partition %s: not hosted by broker %d: %w", tp, rm.opts.BrokerID, kerr.NotLeaderForPartition)
}

// Partitions returns the hosted partitions (DescribeLogDirs, tests).
func (rm *ReplicaManager) Partitions() []*Partition {
	rm.mu.RLock()
	defer rm.mu.RUnlock()
	out := make([]*Partition, 0, len(rm.mu.partitions))
	for _, p := range rm.mu.partitions {
		out = append(out, p)
	}
	return out
}

// ApplyImage makes the hosted partitions match a whole image (start-up):
// partitions it assigns to this broker are opened and made leader or
// follower, hosted ones it no longer assigns are dropped.
func (rm *ReplicaManager) ApplyImage(image *metadata.Image) {
	rm.image.Store(image)
	keep := make(map[kafka.TopicPartition]bool)
	for _, name := range image.TopicNames() {
		t, _ := image.Topic(name)
		for _, tp := range rm.applyTopic(t) {
			keep[tp] = true
		}
	}
	rm.mu.RLock()
	var drop []kafka.TopicPartition
	for tp := range rm.mu.partitions {
		if !keep[tp] {
			drop = append(drop, tp)
		}
	}
	rm.mu.RUnlock()
	for _, tp := range drop {
		rm.removePartition(tp)
	}
	rm.replicas.syncFetchers()
}

// ApplyDelta applies the changes of one published image; it has the shape
// of a metadata.Subscriber.
func (rm *ReplicaManager) ApplyDelta(delta *metadata.Delta, image *metadata.Image) {
	rm.image.Store(image)
	for _, t := range delta.RemovedTopics() {
		for _, id := range t.PartitionIDs() {
			rm.removePartition(kafka.TopicPartition{Topic: t.Name, Partition: id})
		}
	}
	for _, t := range delta.ChangedTopics() {
		hosted := make(map[kafka.TopicPartition]bool)
		for _, tp := range rm.applyTopic(t) {
			hosted[tp] = true
		}
		for _, id := range t.PartitionIDs() {
			tp := kafka.TopicPartition{Topic: t.Name, Partition: id}
			if !hosted[tp] {
				rm.removePartition(tp)
			}
		}
	}
	rm.replicas.syncFetchers()
}

// applyTopic hosts the topic's partitions assigned to this broker and
// returns them.
func (rm *ReplicaManager) applyTopic(t *metadata.Topic) []kafka.TopicPartition {
	var hosted []kafka.TopicPartition
	for _, id := range t.PartitionIDs() {
		st := t.Partitions[id]
		if !containsBroker(st.Replicas, rm.opts.BrokerID) {
			continue
		}
		tp := kafka.TopicPartition{Topic: t.Name, Partition: id}
		hosted = append(hosted, tp)
		p, err := rm.getOrCreatePartition(tp, t.ID)
		if err != nil {
			rm.logger.Error("cannot open partition; it answers KAFKA_STORAGE_ERROR", "partition", tp.String(), "err", err)
			rm.mu.Lock()
			rm.mu.failed[tp] = err
			rm.mu.Unlock()
			continue
		}
		moved, err := p.applyState(st)
		if err != nil {
			rm.logger.Error("cannot apply partition state", "partition", tp.String(), "err", err)
			continue
		}
		if moved {
			rm.highWatermarkMoved(tp)
		}
		// Waiters learn of a leadership change (their request then fails).
		rm.produceWaits.Notify(tp)
		rm.fetchWaits.Notify(tp)
	}
	return hosted
}

func (rm *ReplicaManager) getOrCreatePartition(tp kafka.TopicPartition, topicID kafka.UUID) (*Partition, error) {
	rm.mu.RLock()
	p, ok := rm.mu.partitions[tp]
	rm.mu.RUnlock()
	if ok && p.topicID == topicID {
		return p, nil
	}
	if ok {
		// Same name, new topic id: the topic was deleted and recreated.
		rm.removePartition(tp)
	}
	// Opening a log does I/O: it is done outside the manager-wide lock.
	settings := rm.topicSettings(tp.Topic)
	log, err := rm.opts.Logs.GetOrCreateLog(tp, topicID, settings.Log)
	if err != nil {
		return nil, fmt.Errorf("open log of %s: %w", tp, err)
	}
	p = newPartition(tp, topicID, rm.opts.BrokerID, log, rm.opts.Clock, rm.logger)
	p.settings.Store(settings)
	if src, ok := rm.opts.Logs.(HighWatermarkSource); ok {
		if hw, ok := src.CheckpointedHighWatermark(tp); ok {
			p.restoreHighWatermark(hw)
		}
	}
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if existing, ok := rm.mu.partitions[tp]; ok {
		return existing, nil
	}
	rm.mu.partitions[tp] = p
	p.metrics = rm.metrics.hosted(tp.Topic)
	delete(rm.mu.failed, tp)
	if latest := rm.mu.settings[tp.Topic]; latest != nil && latest != settings {
		// The topic's configuration changed while the log was opening.
		p.settings.Store(latest)
		log.SetOptions(latest.Log)
	}
	return p, nil
}

func (rm *ReplicaManager) removePartition(tp kafka.TopicPartition) {
	rm.mu.Lock()
	_, hosted := rm.mu.partitions[tp]
	delete(rm.mu.partitions, tp)
	delete(rm.mu.failed, tp)
	rm.mu.Unlock()
	if hosted {
		rm.metrics.topics.release(tp.Topic)
		if err := rm.opts.Logs.DeleteLog(tp); err != nil {
			rm.logger.Error("delete log", "partition", tp.String(), "err", err)
		}
	}
	rm.produceWaits.Notify(tp)
	rm.fetchWaits.Notify(tp)
}

// highWatermarkMoved wakes the produces waiting for acks and the fetches
// that may now see more data.
func (rm *ReplicaManager) highWatermarkMoved(tp kafka.TopicPartition) {
	rm.produceWaits.Notify(tp)
	rm.fetchWaits.Notify(tp)
}

func containsBroker(ids []int32, id int32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
