package txncoord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/coordinator/runtime"
	"github.com/sluice-io/sluice/internal/coordinator/txn"
	"github.com/sluice-io/sluice/internal/metadata"
)

// TransactionStateTopic is the internal topic of transaction state.
const TransactionStateTopic = "__transaction_state"

// transactionVersionFeature is the KIP-584 feature whose finalized level
// is the server's transaction version.
const transactionVersionFeature = "transaction.version"

// ProducerIDSource hands out producer ids (the broker's
// ProducerIDManager).
type ProducerIDSource interface {
	NextProducerID(ctx context.Context) (int64, error)
}

// MarkerWriter writes transaction markers to partitions this broker leads
// (the broker's MarkerWriter, which the WriteTxnMarkers handler calls too):
// the answer has one code per partition of each marker.
type MarkerWriter interface {
	WriteTxnMarkers(ctx context.Context, req *kmsg.WriteTxnMarkersRequest) *kmsg.WriteTxnMarkersResponse
}

// PeerRequester sends a request to another broker (transport.Pool).
type PeerRequester interface {
	Request(ctx context.Context, addr string, req kmsg.Request) (kmsg.Response, error)
}

// Options configure a TransactionCoordinator.
type Options struct {
	// NodeID is this broker's node.id.
	NodeID int32
	// Txn holds the coordinator's settings (transaction.max.timeout.ms,
	// transactional.id.expiration.ms, the clean-up intervals) and
	// OffsetsPartitionFor. A nil TransactionVersion reads the image's
	// finalized transaction.version.
	Txn txn.Config
	// NumPartitions, ReplicationFactor, MinISR and SegmentBytes are
	// transaction.state.log.{num.partitions, replication.factor, min.isr,
	// segment.bytes}, used to create the topic; an existing topic's own
	// partition count decides the mapping of ids.
	NumPartitions     int32
	ReplicationFactor int16
	MinISR            int32
	SegmentBytes      int64
	// Writer reaches the partitions of TransactionStateTopic.
	Writer runtime.PartitionWriter
	// Image returns the latest metadata image (leaders, endpoints,
	// brokers, features).
	Image func() *metadata.Image
	// CreateTopic creates the topic; nil never creates it.
	CreateTopic runtime.TopicCreator
	// ProducerIDs allocates producer ids. Required.
	ProducerIDs ProducerIDSource
	// Markers configure the marker channel.
	Markers MarkerOptions
	// Clock drives the state machines, the shards' timers and the marker
	// retries; nil is the real clock.
	Clock clock.Clock
	// TickInterval is the shards' timer granularity (0: 100 ms).
	TickInterval time.Duration
	// WriteTimeout bounds one append's wait for the high watermark (0: 5 s;
	// Kafka uses request.timeout.ms).
	WriteTimeout time.Duration
	Logger       *slog.Logger
}

// MarkerOptions configure the marker channel.
type MarkerOptions struct {
	// Local writes the markers of partitions this broker leads. Required.
	Local MarkerWriter
	// Peers reaches other brokers; nil on a single node.
	Peers PeerRequester
	// Listener is the inter-broker listener, on which other leaders are
	// reached.
	Listener string
	// RetryBackoff is the wait before a marker is sent again after a
	// retriable error or a leader change (0: 100 ms), doubling to 1 s.
	RetryBackoff time.Duration
	// RequestTimeout bounds one WriteTxnMarkers (0: 30 s,
	// request.timeout.ms).
	RequestTimeout time.Duration
}

func (o *Options) withDefaults() error {
	switch {
	case o.ProducerIDs == nil:
		return errors.New("no producer id source")
	case o.Markers.Local == nil:
		return errors.New("no local marker writer")
	}
	if o.NumPartitions <= 0 {
		o.NumPartitions = 50
	}
	if o.ReplicationFactor <= 0 {
		o.ReplicationFactor = 3
	}
	if o.MinISR <= 0 {
		o.MinISR = 2
	}
	if o.SegmentBytes <= 0 {
		o.SegmentBytes = 100 << 20
	}
	if o.Image == nil {
		o.Image = metadata.EmptyImage
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Txn.TransactionVersion == nil {
		image := o.Image
		o.Txn.TransactionVersion = func() txn.TransactionVersion {
			return txn.TransactionVersion(image().FeatureLevel(transactionVersionFeature))
		}
	}
	return nil
}

// runtimeOptions are the runtime's options for the transaction state
// topic; newShard builds a partition's shard.
func (o *Options) runtimeOptions(newShard func(partition, epoch int32, now time.Time) *txnShard) runtime.Options[*txnShard] {
	return runtime.Options[*txnShard]{
		Name: "transaction coordinator", Topic: TransactionStateTopic, NodeID: o.NodeID,
		NewShard:          newShard,
		NumPartitions:     o.NumPartitions,
		ReplicationFactor: o.ReplicationFactor,
		// Kafka's TransactionStateManager.transactionTopicConfigs.
		TopicConfigs: map[string]string{
			"cleanup.policy":                 "compact",
			"compression.type":               "uncompressed",
			"unclean.leader.election.enable": "false",
			"segment.bytes":                  strconv.FormatInt(o.SegmentBytes, 10),
		},
		Writer: o.Writer, Image: o.Image, CreateTopic: o.cappedCreator(), Clock: o.Clock,
		TickInterval: o.TickInterval, WriteTimeout: o.WriteTimeout, Logger: o.Logger,
	}
}

// cappedCreator creates the topic with the replication factor capped at
// the unfenced brokers, and min.insync.replicas (min.isr) capped at that
// factor, so that the topic can take writes.
func (o *Options) cappedCreator() runtime.TopicCreator {
	if o.CreateTopic == nil {
		return nil
	}
	minISR := o.MinISR
	return func(ctx context.Context, name string, partitions int32, rf int16, configs map[string]string) error {
		if live := unfencedBrokers(o.Image()); live > 0 && int(rf) > live {
			rf = int16(live)
		}
		withISR := maps.Clone(configs)
		if withISR == nil {
			withISR = make(map[string]string, 1)
		}
		withISR["min.insync.replicas"] = strconv.Itoa(int(min(minISR, int32(rf))))
		if err := o.CreateTopic(ctx, name, partitions, rf, withISR); err != nil {
			return fmt.Errorf("replication factor %d: %w", rf, err)
		}
		return nil
	}
}

func unfencedBrokers(im *metadata.Image) int {
	n := 0
	for _, id := range im.BrokerIDs() {
		if b, ok := im.Broker(id); ok && !b.Fenced {
			n++
		}
	}
	return n
}
