// Package sharepersist is the broker's client of the share coordinator
// (Kafka's DefaultStatePersister and PersisterStateManager): a share
// partition's leader reads, writes, initializes and deletes its persisted
// state in __share_group_state through the internal state APIs
// (ReadShareGroupState, WriteShareGroupState, InitializeShareGroupState,
// DeleteShareGroupState, ReadShareGroupStateSummary), sent to the broker
// leading the state's partition of that topic, or handed to the local
// coordinator when that broker is this one.
//
// Kafka finds the coordinator with FindCoordinator (key type SHARE) and
// batches the partitions of several share partitions into one request per
// coordinator; here the leader comes from this broker's metadata image and
// each call carries one share partition. A coordinator that moved or is
// loading (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE,
// COORDINATOR_LOAD_IN_PROGRESS) or a broker that cannot be reached is
// retried with backoff until the caller's context ends, as Kafka's
// persister retries them.
package sharepersist

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/replication"
)

// StateTopic is the share coordinator's internal topic.
const StateTopic = "__share_group_state"

// Key names one share partition's state (Kafka's SharePartitionKey).
type Key struct {
	GroupID   string
	TopicID   kafka.UUID
	Partition int32
}

// CoordinatorKey is the key FindCoordinator (type SHARE) takes and the
// state topic is partitioned by: "group:topicId:partition".
func (k Key) CoordinatorKey() string {
	return k.GroupID + ":" + k.TopicID.String() + ":" + strconv.Itoa(int(k.Partition))
}

// PeerRequester sends a request to another broker (transport.Pool).
type PeerRequester interface {
	Request(ctx context.Context, addr string, req kmsg.Request) (kmsg.Response, error)
}

// Options configure a Persister.
type Options struct {
	// NodeID is this broker's node.id.
	NodeID int32
	// Image returns the latest metadata image (the state topic's leaders
	// and the brokers' endpoints).
	Image func() *metadata.Image
	// PartitionFor maps a coordinator key to a partition of the state
	// topic of n partitions (the share coordinator's mapping).
	PartitionFor func(key string, n int32) int32
	// Locate, when set, names key's coordinator instead of the image, and
	// creates the state topic on first use (the share coordinator's
	// FindCoordinator); its code is a Kafka error code.
	Locate func(ctx context.Context, key string) (int32, int16)
	// Local serves a request on this broker's share coordinator; nil when
	// this node runs none, so every request goes to Peers.
	Local func(ctx context.Context, req kmsg.Request) (kmsg.Response, error)
	// Peers reaches other brokers on Listener; nil on a single node.
	Peers    PeerRequester
	Listener string
	// Clock times the retry backoff; nil is the real clock.
	Clock clock.Clock
	// Backoff is the first retry's wait, doubled up to MaxBackoff (0:
	// 100 ms and 1 s).
	Backoff, MaxBackoff time.Duration
}

// Persister reads and writes share partitions' state. Safe for concurrent
// use: it keeps no state of its own.
type Persister struct {
	opts Options
}

// New returns a Persister.
func New(opts Options) *Persister {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 100 * time.Millisecond
	}
	if opts.MaxBackoff < opts.Backoff {
		opts.MaxBackoff = max(time.Second, opts.Backoff)
	}
	return &Persister{opts: opts}
}

// errNoCoordinator is a state partition without a reachable leader yet.
var errNoCoordinator = kerr.CoordinatorNotAvailable

// coordinator is the broker leading key's partition of the state topic.
func (p *Persister) coordinator(ctx context.Context, key Key) (int32, error) {
	if p.opts.Locate != nil {
		node, code := p.opts.Locate(ctx, key.CoordinatorKey())
		if code != 0 {
			return -1, kerr.ErrorForCode(code)
		}
		return node, nil
	}
	im := p.opts.Image()
	t, ok := im.Topic(StateTopic)
	if !ok || len(t.Partitions) == 0 {
		return -1, errNoCoordinator
	}
	part := p.opts.PartitionFor(key.CoordinatorKey(), int32(len(t.Partitions)))
	st, ok := t.Partitions[part]
	if !ok || st.Leader < 0 {
		return -1, errNoCoordinator
	}
	return st.Leader, nil
}

// send delivers req to key's coordinator once.
func (p *Persister) send(ctx context.Context, key Key, req kmsg.Request) (kmsg.Response, error) {
	node, err := p.coordinator(ctx, key)
	if err != nil {
		return nil, err
	}
	if node == p.opts.NodeID && p.opts.Local != nil {
		return p.opts.Local(ctx, req)
	}
	if p.opts.Peers == nil {
		return nil, fmt.Errorf("share coordinator %d is remote and this node has no peer client: %w", node, errNoCoordinator)
	}
	addr, ok := replication.BrokerAddress(p.opts.Image(), node, p.opts.Listener)
	if !ok {
		return nil, fmt.Errorf("broker %d has no %s endpoint: %w", node, p.opts.Listener, errNoCoordinator)
	}
	resp, err := p.opts.Peers.Request(ctx, addr, req)
	if err != nil {
		return nil, fmt.Errorf("%s to broker %d at %s: %w", kmsg.NameForKey(req.Key()), node, addr, err)
	}
	return resp, nil
}

// retriable reports whether err means the coordinator may answer later.
func retriable(err error) bool {
	switch {
	case errors.Is(err, kerr.NotCoordinator), errors.Is(err, kerr.CoordinatorNotAvailable),
		errors.Is(err, kerr.CoordinatorLoadInProgress), errors.Is(err, kerr.RequestTimedOut):
		return true
	}
	var ke *kerr.Error
	// A transport error (refused, reset, closed) is not a Kafka error.
	return !errors.As(err, &ke)
}

// do sends req until its answer, decoded by code into the share
// partition's error, is not a retriable one or ctx ends.
func (p *Persister) do(ctx context.Context, key Key, req kmsg.Request, code func(kmsg.Response) error) (kmsg.Response, error) {
	wait := p.opts.Backoff
	for {
		resp, err := p.send(ctx, key, req)
		if err == nil {
			err = code(resp)
		}
		if err == nil || !retriable(err) {
			return resp, err
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s for %s: %w (last: %w)", kmsg.NameForKey(req.Key()), key.CoordinatorKey(), ctx.Err(), err)
		}
		t := p.opts.Clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%s for %s: %w (last: %w)", kmsg.NameForKey(req.Key()), key.CoordinatorKey(), ctx.Err(), err)
		case <-t.C():
		}
		wait = min(2*wait, p.opts.MaxBackoff)
	}
}

// partitionError is the Kafka error of one partition's answer (nil for 0),
// with the coordinator's message when it gave one.
func partitionError(code int16, msg *string) error {
	if code == 0 {
		return nil
	}
	err := kerr.ErrorForCode(code)
	if msg != nil && *msg != "" {
		return fmt.Errorf("%w: %s", err, *msg)
	}
	return err
}

// errMissing is an answer that does not name the partition asked for.
func errMissing(key Key) error {
	return fmt.Errorf("share coordinator's answer has no partition %s: %w", key.CoordinatorKey(), kerr.UnknownServerError)
}

// errUnexpected is an answer of the wrong type.
func errUnexpected(r kmsg.Response) error {
	return fmt.Errorf("share coordinator answered %T: %w", r, kerr.UnknownServerError)
}
