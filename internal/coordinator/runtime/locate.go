package runtime

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// Node is a coordinator's address for FindCoordinator.
type Node struct {
	NodeID int32
	Host   string
	Port   int32
}

// PartitionFor maps a key (a group id, a transactional id) onto one of n
// partitions as Kafka does: Utils.abs(key.hashCode()) % n, with Java's
// String hashCode over UTF-16 code units.
func PartitionFor(key string, n int32) int32 {
	h := javaStringHash(key)
	if h == -1<<31 {
		h = 0 // Kafka's Utils.abs maps Integer.MIN_VALUE to 0
	} else if h < 0 {
		h = -h
	}
	return h % n
}

func javaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// Locate returns the broker that leads the key's partition (PartitionFor
// over the existing topic's partition count), as reached on listener: a
// FindCoordinator answer. The topic is created on first use; while it is
// being created or the partition has no reachable leader the answer is
// COORDINATOR_NOT_AVAILABLE.
func (r *Runtime[S]) Locate(ctx context.Context, key, listener string) (Node, int16) {
	unavailable := Node{NodeID: -1, Port: -1}
	image := r.opts.Image()
	t, ok := image.Topic(r.opts.Topic)
	if !ok {
		if err := r.CreateTopic(ctx); err != nil {
			r.opts.Logger.Warn("creating the "+r.opts.Topic+" topic", "err", err)
		}
		return unavailable, kerr.CoordinatorNotAvailable.Code
	}
	p := PartitionFor(key, int32(len(t.Partitions)))
	st, ok := image.Partition(kafka.TopicPartition{Topic: r.opts.Topic, Partition: p})
	if !ok || st.Leader < 0 {
		return unavailable, kerr.CoordinatorNotAvailable.Code
	}
	b, ok := image.Broker(st.Leader)
	if !ok || b.Fenced {
		return unavailable, kerr.CoordinatorNotAvailable.Code
	}
	i := slices.IndexFunc(b.Endpoints, func(e metadata.Endpoint) bool { return e.Name == listener })
	if i < 0 {
		return unavailable, kerr.CoordinatorNotAvailable.Code
	}
	return Node{NodeID: b.ID, Host: b.Endpoints[i].Host, Port: b.Endpoints[i].Port}, 0
}
