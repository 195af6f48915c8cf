package api

// KIP-951: a Produce (v10+) or Fetch (v16+) answer that tells a client this
// broker does not lead a partition also names the partition's current leader
// and epoch, and the endpoints of the leaders it names, so the client can move
// to the new leader without first refreshing its metadata. As Kafka's
// KafkaApis.getCurrentLeader, the leader and epoch come from this broker's
// view of the metadata (-1/-1 when the partition is unknown), and an endpoint
// is given only for a leader that is registered, unfenced and reachable on
// the listener the request came in on.

import (
	"slices"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// leaderEndpoint is one node endpoint of a KIP-951 answer.
type leaderEndpoint struct {
	NodeID int32
	Host   string
	Port   int32
	Rack   *string
}

// currentLeaders collects the current leaders named in one response. With
// no image source it names no leader (-1/-1), for brokers assembled without
// metadata (tests of the data plane alone).
type currentLeaders struct {
	src      MetadataView
	listener string
	// image is loaded at the first question, so an answer without errors
	// costs nothing, and then kept, so every partition of one answer is
	// described from the same metadata.
	image     *metadata.Image
	endpoints map[int32]leaderEndpoint
}

// newCurrentLeaders returns a value, kept on the caller's stack: a Fetch or
// Produce without errors allocates nothing for KIP-951.
func newCurrentLeaders(src MetadataView, listener string) currentLeaders {
	return currentLeaders{src: src, listener: listener}
}

// leaderOf returns the partition's current leader and leader epoch, -1 and -1
// when the metadata does not know the partition, and records the leader's
// endpoint when it is live on the request's listener.
func (cl *currentLeaders) leaderOf(tp kafka.TopicPartition) (leaderID, leaderEpoch int32) {
	cl.load()
	if cl.image == nil {
		return -1, -1
	}
	st, ok := cl.image.Partition(tp)
	if !ok {
		return -1, -1
	}
	if b, ok := cl.image.Broker(st.Leader); ok && !b.Fenced {
		if ep, ok := brokerEndpoint(b, cl.listener); ok {
			if cl.endpoints == nil {
				cl.endpoints = make(map[int32]leaderEndpoint)
			}
			cl.endpoints[b.ID] = leaderEndpoint{NodeID: b.ID, Host: ep.Host, Port: ep.Port, Rack: b.Rack}
		}
	}
	return st.Leader, st.LeaderEpoch
}

// nodeEndpoints returns the recorded endpoints ordered by node id (Kafka's
// order is a hash map's; a fixed order keeps answers reproducible).
func (cl *currentLeaders) nodeEndpoints() []leaderEndpoint {
	if len(cl.endpoints) == 0 {
		return nil
	}
	out := make([]leaderEndpoint, 0, len(cl.endpoints))
	for _, ep := range cl.endpoints {
		out = append(out, ep)
	}
	slices.SortFunc(out, func(a, b leaderEndpoint) int { return int(a.NodeID) - int(b.NodeID) })
	return out
}

// topicName resolves a topic id (v13+ Produce answers name topics by id
// only) in the same image the leaders are read from.
func (cl *currentLeaders) topicName(id kafka.UUID) (string, bool) {
	cl.load()
	if cl.image == nil {
		return "", false
	}
	t, ok := cl.image.TopicByID(id)
	if !ok {
		return "", false
	}
	return t.Name, true
}

func (cl *currentLeaders) load() {
	if cl.image == nil && cl.src != nil {
		cl.image = cl.src.Image()
	}
}
