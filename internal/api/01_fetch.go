package api

// Fetch (key 1), versions 4-18: the pinned release's range (KIP-896 floor).
//
// Behaviour as Kafka's: long poll up to max_wait_ms for min_bytes in the
// purgatory (the handler blocks the connection's reader, one request in
// flight per connection, as Kafka); max_bytes (capped by fetch.max.bytes)
// shared by the partitions in request order and partition_max_bytes each,
// the first batch of the first partition with data whole even above them
// (KIP-74); read_uncommitted reads to the high watermark, read_committed to
// the last stable offset; incremental fetch sessions (KIP-227, see
// fetch_sessions.go); topic ids from v13 (UNKNOWN_TOPIC_ID); current leader
// epoch checks (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH); last_fetched_epoch
// (v12+) is validated for every fetcher, consumers included, answering a
// diverging epoch when the fetcher's log diverged (KIP-320); errors answer
// at once with offsets -1. The body is streamed by fetchwire: record bytes go
// from segment files to the socket with sendfile on plaintext listeners.
//
// Follower fetches (replica id >= 0, from ReplicaState from v15) read up to
// the log end offset and report the follower's position, which moves the
// high watermark; a broker that is not an assigned replica gets
// NOT_LEADER_OR_FOLLOWER.
//
// read_committed answers carry the aborted transactions (producer id, first
// offset) overlapping the returned batches, from the transaction index;
// read_uncommitted ones a null list, as Kafka.
//
// Authorization as Kafka's: a follower fetch needs CLUSTER_ACTION on the
// cluster, a consumer's READ on each topic (a topic id is resolved first:
// UNKNOWN_TOPIC_ID); a refusal is TOPIC_AUTHORIZATION_FAILED per partition.
//
// Deviations: the preferred read replica is always -1 (no KIP-392 rack
// awareness). A follower's broker epoch
// (ReplicaState, KIP-903) travels with the ISR expansion it earns, so the
// controller refuses to add a replica whose broker restarted since that
// fetch.
//
// KIP-951 (v16+), as Kafka: a partition the replica manager answers
// NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH carries current_leader
// (leader id and epoch from this broker's metadata image) and the response
// lists the node_endpoints of the leaders so named that are live on the
// request's listener (current_leader.go), ordered by node id. Partitions
// refused before reading (unknown topic id) carry neither, as in Kafka.
//
// On a CONTROLLER listener Fetch serves only the metadata log
// (newMetadataLogFetchHandler, versions 4-16): observers pull
// __cluster_metadata-0 from the active controller, committed entries only
// (others answer NOT_LEADER_OR_FOLLOWER with the leader they know); any
// other partition is UNKNOWN_TOPIC_OR_PARTITION. Sessions (KIP-227) are not
// kept there: every fetch is a full one.

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/fetchwire"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/replication"
)

// defaultFetchMaxBytes is Kafka's fetch.max.bytes default (55 MiB).
const defaultFetchMaxBytes = 55 << 20

type fetchHandler struct {
	dp       DataPlane
	leaders  MetadataView
	sessions *fetchSessionCache
	maxBytes int32
}

// newFetchHandler serves Fetch on d's partitions; leaders (nil: none) names
// current leaders in KIP-951 answers.
func newFetchHandler(d *DataPlaneDeps, leaders MetadataView) Handler {
	maxBytes := d.FetchMaxBytes
	if maxBytes <= 0 {
		maxBytes = defaultFetchMaxBytes
	}
	h := &fetchHandler{dp: d.Partitions, leaders: leaders, sessions: newFetchSessionCache(d.FetchSessionCacheSlots, d.FetchSessionEviction, d.clock()), maxBytes: maxBytes}
	return Handler{
		Key:        1,
		MinVersion: fetchwire.MinVersion,
		MaxVersion: fetchwire.MaxVersion,
		Handle: func(ctx context.Context, req *Request) Response {
			body, ok := req.Body.(*kmsg.FetchRequest)
			if !ok {
				return CloseConnection(fmt.Errorf("fetch: unexpected body %T", req.Body))
			}
			return h.handle(ctx, body, req.Conn.Listener, fetchAuthorizer(req))
		},
	}
}

// newMetadataLogFetchHandler serves Fetch on CONTROLLER listeners, where
// the only partition is the metadata log.
func newMetadataLogFetchHandler(logs MetadataLogServer) Handler {
	return Handler{
		Key:        1,
		MinVersion: 4,
		MaxVersion: 16,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.FetchRequest)
			resp, err := (*kmsg.FetchResponse)(nil), req.clusterRefusal(opClusterAction) // Kafka's controller: CLUSTER_ACTION
			if err == nil {
				resp, err = logs.FetchMetadataLog(ctx, body)
			}
			if err != nil {
				resp = kmsg.NewPtrFetchResponse()
				resp.ErrorCode = ControllerErrorCode(err)
			}
			resp.SetVersion(body.Version)
			return Reply(resp)
		},
	}
}

// fetchAuthorizer is Kafka's Fetch authorization: a follower needs
// CLUSTER_ACTION on the cluster, a consumer READ on each topic; either
// refusal is TOPIC_AUTHORIZATION_FAILED on the partition.
func fetchAuthorizer(req *Request) func(topic string, follower bool) bool {
	readable := map[string]bool{}
	return func(topic string, follower bool) bool {
		if follower {
			return req.authorizeCluster(opClusterAction)
		}
		ok, seen := readable[topic]
		if !seen {
			ok = req.authorize(opRead, resTopic, topic)
			readable[topic] = ok
		}
		return ok
	}
}

func (h *fetchHandler) handle(ctx context.Context, req *kmsg.FetchRequest, listener string, readable func(topic string, follower bool) bool) Response {
	replicaID, replicaEpoch := req.ReplicaID, int64(-1)
	if req.Version >= 15 {
		replicaID, replicaEpoch = req.ReplicaState.ID, req.ReplicaState.Epoch
	}
	usesTopicIDs := req.Version >= 13
	reqParts := h.requestPartitions(req, usesTopicIDs)
	var forgotten []sessionKey
	for _, ft := range req.ForgottenTopics {
		for _, p := range ft.Partitions {
			k := sessionKey{Partition: p}
			if usesTopicIDs {
				k.ID = kafka.UUID(ft.TopicID)
			} else {
				k.Name = ft.Topic
			}
			forgotten = append(forgotten, k)
		}
	}
	fc := h.sessions.newContext(req.SessionID, req.SessionEpoch, usesTopicIDs, replicaID >= 0, reqParts, forgotten)
	if fc.errCode != 0 {
		return h.encode(req.Version, &fetchwire.Response{ErrorCode: fc.errCode})
	}
	if usesTopicIDs {
		// Session partitions name topics by id: resolve them now, as a
		// topic may have been created or deleted since they were added.
		for i := range fc.parts {
			fc.parts[i].name, _ = h.dp.TopicName(fc.parts[i].key.ID)
		}
	}

	// Partitions whose topic id is unknown are answered without reading.
	var (
		toFetch []replication.FetchPartition
		fetchAt = make([]int, len(fc.parts))
		denied  = make([]bool, len(fc.parts))
	)
	followerDenied := replicaID >= 0 && !readable("", true)
	for i, sp := range fc.parts {
		fetchAt[i] = -1
		if followerDenied || (sp.name != "" && replicaID < 0 && !readable(sp.name, false)) {
			denied[i] = true
			continue
		}
		if sp.name == "" {
			continue
		}
		fetchAt[i] = len(toFetch)
		toFetch = append(toFetch, replication.FetchPartition{
			TP:                 kafka.TopicPartition{Topic: sp.name, Partition: sp.key.Partition},
			FetchOffset:        sp.fetchOffset,
			CurrentLeaderEpoch: sp.currentLeaderEpoch,
			LastFetchedEpoch:   sp.lastFetchedEpoch,
			MaxBytes:           sp.maxBytes,
		})
	}
	var results []replication.FetchPartitionResult
	if len(toFetch) > 0 {
		results = h.dp.Fetch(ctx, replication.FetchParams{
			ReplicaID:    replicaID,
			ReplicaEpoch: replicaEpoch,
			MaxWait:      time.Duration(req.MaxWaitMillis) * time.Millisecond,
			MinBytes:     req.MinBytes,
			MaxBytes:     quotaOf(ctx).capFetchBytes(min(req.MaxBytes, h.maxBytes), replicaID >= 0),
			Isolation:    replication.IsolationForLevel(req.IsolationLevel),
		}, toFetch)
	}

	answers := make([]fetchwire.Partition, len(fc.parts))
	outcomes := make([]partitionOutcome, len(fc.parts))
	leaders := newCurrentLeaders(h.leaders, listener)
	for i, sp := range fc.parts {
		answers[i], outcomes[i] = h.partitionAnswer(sp, fetchAt[i], results, req.IsolationLevel, usesTopicIDs)
		if denied[i] {
			answers[i].ErrorCode = kerr.TopicAuthorizationFailed.Code
		}
		if req.Version >= 16 && fetchAt[i] >= 0 && tellsCurrentLeader(answers[i].ErrorCode) {
			id, epoch := leaders.leaderOf(kafka.TopicPartition{Topic: sp.name, Partition: sp.key.Partition})
			if id != -1 || epoch != -1 {
				// Kafka leaves the tagged field out when it holds its defaults.
				answers[i].CurrentLeader = &fetchwire.LeaderIDAndEpoch{LeaderID: id, LeaderEpoch: epoch}
			}
		}
	}
	if ms := quotaOf(ctx).fetchThrottle(fetchResponseSize(req.Version, &fc, answers), replicaID >= 0); ms > 0 {
		return h.encode(req.Version, throttledFetch(&fc, ms))
	}
	replication.CountFetchedBytes(replicaID >= 0, results)
	sessionID, include := h.sessions.complete(&fc, outcomes)
	resp := &fetchwire.Response{SessionID: sessionID}
	for _, ep := range leaders.nodeEndpoints() {
		resp.NodeEndpoints = append(resp.NodeEndpoints, fetchwire.NodeEndpoint{NodeID: ep.NodeID, Host: ep.Host, Port: ep.Port, Rack: ep.Rack})
	}
	for i, sp := range fc.parts {
		if !include[i] {
			continue
		}
		n := len(resp.Topics)
		if n == 0 || resp.Topics[n-1].ID != sp.key.ID || resp.Topics[n-1].Name != sp.key.Name {
			resp.Topics = append(resp.Topics, fetchwire.Topic{Name: sp.key.Name, ID: sp.key.ID})
			n++
		}
		resp.Topics[n-1].Partitions = append(resp.Topics[n-1].Partitions, answers[i])
	}
	return h.encode(req.Version, resp)
}

// requestPartitions turns the request's topics into session partitions,
// resolving names from topic ids (v13+).
func (h *fetchHandler) requestPartitions(req *kmsg.FetchRequest, usesTopicIDs bool) []sessionPartition {
	var parts []sessionPartition
	for _, rt := range req.Topics {
		key := sessionKey{Name: rt.Topic}
		name := rt.Topic
		if usesTopicIDs {
			key = sessionKey{ID: kafka.UUID(rt.TopicID)}
			name, _ = h.dp.TopicName(key.ID)
		}
		for _, rp := range rt.Partitions {
			k := key
			k.Partition = rp.Partition
			lastFetched := int32(-1)
			if req.Version >= 12 {
				lastFetched = rp.LastFetchedEpoch
			}
			parts = append(parts, sessionPartition{
				key: k, name: name, fetchOffset: rp.FetchOffset,
				currentLeaderEpoch: rp.CurrentLeaderEpoch, lastFetchedEpoch: lastFetched,
				maxBytes: rp.PartitionMaxBytes, highWatermark: -1, logStartOffset: -1,
			})
		}
	}
	return parts
}

// partitionAnswer builds one partition's answer and its session outcome.
func (h *fetchHandler) partitionAnswer(sp sessionPartition, at int, results []replication.FetchPartitionResult, isolation int8, usesTopicIDs bool) (fetchwire.Partition, partitionOutcome) {
	ans := fetchwire.Partition{Partition: sp.key.Partition, HighWatermark: -1, LastStableOffset: -1, LogStartOffset: -1, PreferredReadReplica: -1}
	var code int16
	switch {
	case at >= 0:
		res := results[at]
		code = errorCode(res.Err)
		if code == 0 {
			ans.HighWatermark, ans.LastStableOffset, ans.LogStartOffset = res.HighWatermark, res.LastStableOffset, res.LogStartOffset
			for _, s := range res.Records.Slices {
				ans.Records = append(ans.Records, fetchwire.Slice{File: s.File, Pos: s.Pos, Size: s.Size})
			}
			if res.DivergingEpoch != nil {
				ans.DivergingEpoch = &fetchwire.EpochEndOffset{Epoch: res.DivergingEpoch.Epoch, EndOffset: res.DivergingEpoch.EndOffset}
			}
			if isolation == 1 {
				ans.AbortedTransactions = make([]fetchwire.AbortedTransaction, 0, len(res.AbortedTransactions))
				for _, a := range res.AbortedTransactions {
					ans.AbortedTransactions = append(ans.AbortedTransactions, fetchwire.AbortedTransaction{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset})
				}
			}
		}
	case usesTopicIDs:
		// Named by a topic id that the metadata does not know.
		code = kerr.UnknownTopicID.Code
	default:
		code = kerr.UnknownTopicOrPartition.Code
	}
	ans.ErrorCode = code
	var size int64
	for _, s := range ans.Records {
		size += s.Size
	}
	return ans, partitionOutcome{
		highWatermark: ans.HighWatermark, logStartOffset: ans.LogStartOffset,
		hasRecords: size > 0, failed: code != 0, diverging: ans.DivergingEpoch != nil,
	}
}

// tellsCurrentLeader reports whether a Fetch error carries KIP-951's
// current leader: the two that mean "this broker is not the leader you want".
func tellsCurrentLeader(code int16) bool {
	return code == kerr.NotLeaderForPartition.Code || code == kerr.FencedLeaderEpoch.Code
}

func (h *fetchHandler) encode(version int16, resp *fetchwire.Response) Response {
	enc, err := fetchwire.Encode(resp, version)
	if err != nil {
		return CloseConnection(fmt.Errorf("fetch: encode response v%d: %w", version, err))
	}
	return Stream(enc)
}
