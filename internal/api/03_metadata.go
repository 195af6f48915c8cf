package api

// Metadata (key 3), versions 0-13: the pinned Kafka release's range.
//
// Behaviour as Kafka's KRaft broker: topics by name, by id (v10+, unknown ids
// get UNKNOWN_TOPIC_ID), or all (a null list from v1, an empty one in v0);
// brokers are the unfenced registered brokers that have the listener the
// request came in on, with its advertised host and port; the controller id is
// a live broker (KIP-590); leader epochs (v7+) and offline replicas (v5+:
// replicas whose broker is unregistered, fenced or lacks the listener).
// A missing topic is auto-created only when auto.create.topics.enable is set,
// the request allows it (always below v4) and it does not ask for all topics;
// a created topic answers UNKNOWN_TOPIC_OR_PARTITION as Kafka 4.4's does (its
// DefaultAutoTopicCreationManager answers so for every topic it sends for
// creation; older releases answered LEADER_NOT_AVAILABLE), a missing one
// UNKNOWN_TOPIC_OR_PARTITION and a malformed name INVALID_TOPIC_EXCEPTION.
// A partition without a live leader answers LEADER_NOT_AVAILABLE with leader
// -1. Authorized operations are INT32_MIN unless asked; when asked, the
// operations the principal may perform (every one without an authorizer).
//
// Authorization as Kafka's: topics the principal may not DESCRIBE are left
// out of an all-topics answer and answered TOPIC_AUTHORIZATION_FAILED when
// asked for by name (without their id) or by id (without their name),
// whether they exist or not; a missing topic is auto-created only with
// CREATE on the cluster or on the topic, else TOPIC_AUTHORIZATION_FAILED;
// cluster authorized operations (v8-10) need DESCRIBE on the cluster (0
// otherwise).
//
// Deviations: the controller id is this node's id when it is a live broker,
// otherwise the lowest live broker id (Kafka picks a random live broker;
// either satisfies KIP-590). Internal topics (__consumer_offsets,
// __transaction_state) are not auto-created from Metadata: their coordinator
// creates them. Auto-creation completes before the answer (the topic exists
// when the client asks again) where Kafka's is asynchronous.

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// Kafka's AclOperation bits for "every operation" of a topic and of the
// cluster (KIP-430), reported when a client asks and no authorizer is set.
const (
	allTopicOperations   int32 = 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<10 | 1<<11
	allClusterOperations int32 = 1<<5 | 1<<7 | 1<<8 | 1<<9 | 1<<10 | 1<<11 | 1<<12 | 1<<13 | 1<<14
)

func newMetadataHandler(cfg *config.Config, view MetadataView, admin AdminController) Handler {
	return Handler{
		Key:        3,
		MinVersion: 0,
		MaxVersion: 13,
		Handle: func(ctx context.Context, req *Request) Response {
			body, ok := req.Body.(*kmsg.MetadataRequest)
			if !ok {
				return Reply(kmsg.NewPtrMetadataResponse())
			}
			return Reply(metadataResponse(ctx, cfg, view, admin, req.Conn.Listener, body, newMetadataAuth(req)))
		},
	}
}

// metadataAuth is what Metadata asks the authorizer.
type metadataAuth struct {
	describe func(topic string) bool
	// create reports CREATE on the cluster or on the topic.
	create     func(topic string) bool
	topicOps   func(topic string) int32
	clusterOps func() int32
}

// allowAllMetadata answers as Kafka without an authorizer.
var allowAllMetadata = metadataAuth{
	describe: allowAll, create: allowAll,
	topicOps:   func(string) int32 { return allTopicOperations },
	clusterOps: func() int32 { return allClusterOperations },
}

func newMetadataAuth(req *Request) metadataAuth {
	if !req.hasAuthorizer() {
		return allowAllMetadata
	}
	createTopic := req.topicCheck(opCreate)
	return metadataAuth{
		describe: req.topicCheck(opDescribe),
		create: func(topic string) bool {
			return req.authorizeCluster(opCreate) || createTopic(topic)
		},
		topicOps: func(topic string) int32 { return req.authorizedOperations(resTopic, topic, allTopicOperations) },
		clusterOps: func() int32 {
			if !req.authorizeCluster(opDescribe) {
				return 0
			}
			return req.authorizedOperations(resCluster, clusterName, allClusterOperations)
		},
	}
}

func metadataResponse(ctx context.Context, cfg *config.Config, view MetadataView, admin AdminController, listener string, req *kmsg.MetadataRequest, az metadataAuth) *kmsg.MetadataResponse {
	resp := kmsg.NewPtrMetadataResponse()
	resp.SetVersion(req.Version)
	byTopicID(req)
	allTopics := req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0)
	autoCreate := cfg.Bool(config.AutoCreateTopicsEnable) && !allTopics &&
		(req.Version < 4 || req.AllowAutoTopicCreation)

	var created []string
	if autoCreate {
		created = autoCreateTopics(ctx, view.Image(), admin, authorizedForCreate(view.Image(), req.Topics, az))
	}
	im := view.Image()
	clusterID := im.ClusterID()
	resp.ClusterID = &clusterID
	resp.ControllerID = liveControllerID(im, cfg.NodeID())
	if req.Version >= 8 && req.Version <= 10 && req.IncludeClusterAuthorizedOperations {
		resp.AuthorizedOperations = az.clusterOps()
	}
	for _, id := range im.BrokerIDs() {
		b, _ := im.Broker(id)
		ep, ok := brokerEndpoint(b, listener)
		if !ok || b.Fenced {
			continue
		}
		rb := kmsg.NewMetadataResponseBroker()
		rb.NodeID, rb.Host, rb.Port, rb.Rack = b.ID, ep.Host, ep.Port, b.Rack
		resp.Brokers = append(resp.Brokers, rb)
	}

	wantOps := req.Version >= 8 && req.IncludeTopicAuthorizedOperations
	opsOf := func(topic string) int32 {
		if !wantOps {
			return authorizedOperationsOmitted
		}
		return az.topicOps(topic)
	}
	if allTopics {
		for _, name := range im.TopicNames() {
			if !az.describe(name) {
				continue
			}
			t, _ := im.Topic(name)
			resp.Topics = append(resp.Topics, describeTopicMetadata(im, t, listener, opsOf(name)))
		}
		return resp
	}
	for _, rt := range req.Topics {
		resp.Topics = append(resp.Topics, authorizedTopicMetadata(im, rt, listener, opsOf, created, autoCreate, az))
	}
	return resp
}

// byTopicID makes a topic asked for with an id a request by id, whatever
// its name: the Java client leaves the name "" (its default, not null)
// when it asks by id, as its KIP-848 consumer does for the topics of a
// regex assignment; Kafka looks up every non-zero id.
func byTopicID(req *kmsg.MetadataRequest) {
	for i := range req.Topics {
		if rt := &req.Topics[i]; rt.TopicID != ([16]byte{}) && rt.Topic != nil && *rt.Topic == "" {
			rt.Topic = nil
		}
	}
}

// authorizedTopicMetadata answers one requested topic as Kafka's
// handleTopicMetadataRequest: not describable, TOPIC_AUTHORIZATION_FAILED
// with its name (by name) or its id (by id) only; missing and to be
// auto-created without CREATE, TOPIC_AUTHORIZATION_FAILED.
func authorizedTopicMetadata(im *metadata.Image, rt kmsg.MetadataRequestTopic, listener string, opsOf func(string) int32,
	created []string, autoCreate bool, az metadataAuth) kmsg.MetadataResponseTopic {
	name := ""
	if rt.Topic != nil {
		name = *rt.Topic
	} else if t, ok := im.TopicByID(kafka.UUID(rt.TopicID)); ok {
		name = t.Name
	}
	denied := kmsg.NewMetadataResponseTopic()
	denied.ErrorCode = kerr.TopicAuthorizationFailed.Code
	switch {
	case name == "":
		// An unknown topic id: answered as without an authorizer.
	case !az.describe(name) && rt.Topic == nil:
		denied.TopicID = rt.TopicID
		return denied
	case !az.describe(name):
		denied.Topic = &name
		return denied
	case autoCreate && !az.create(name) && !topicExists(im, name):
		denied.Topic = &name
		denied.IsInternal = isInternalTopic(name)
		return denied
	}
	return requestedTopicMetadata(im, rt, listener, opsOf(name), created)
}

func topicExists(im *metadata.Image, name string) bool {
	_, ok := im.Topic(name)
	return ok
}

// authorizedForCreate keeps the requested topics the principal may
// describe and create.
func authorizedForCreate(im *metadata.Image, topics []kmsg.MetadataRequestTopic, az metadataAuth) []kmsg.MetadataRequestTopic {
	var out []kmsg.MetadataRequestTopic
	for _, rt := range topics {
		if rt.Topic != nil && !topicExists(im, *rt.Topic) && (!az.describe(*rt.Topic) || !az.create(*rt.Topic)) {
			continue
		}
		out = append(out, rt)
	}
	return out
}

// requestedTopicMetadata answers one topic of the request, by name or by id.
func requestedTopicMetadata(im *metadata.Image, rt kmsg.MetadataRequestTopic, listener string, ops int32, created []string) kmsg.MetadataResponseTopic {
	if rt.Topic == nil {
		t, ok := im.TopicByID(kafka.UUID(rt.TopicID))
		if !ok {
			out := kmsg.NewMetadataResponseTopic()
			out.ErrorCode = kerr.UnknownTopicID.Code
			out.TopicID = rt.TopicID
			out.AuthorizedOperations = ops
			return out
		}
		return describeTopicMetadata(im, t, listener, ops)
	}
	name := *rt.Topic
	out := kmsg.NewMetadataResponseTopic()
	out.Topic = &name
	out.IsInternal = isInternalTopic(name)
	out.AuthorizedOperations = ops
	switch {
	case slices.Contains(created, name):
		out.ErrorCode = kerr.UnknownTopicOrPartition.Code
	case !isValidTopicName(name):
		out.ErrorCode = kerr.InvalidTopicException.Code
	default:
		t, ok := im.Topic(name)
		if !ok {
			out.ErrorCode = kerr.UnknownTopicOrPartition.Code
			return out
		}
		return describeTopicMetadata(im, t, listener, ops)
	}
	return out
}

func describeTopicMetadata(im *metadata.Image, t *metadata.Topic, listener string, ops int32) kmsg.MetadataResponseTopic {
	out := kmsg.NewMetadataResponseTopic()
	name := t.Name
	out.Topic = &name
	out.TopicID = t.ID
	out.IsInternal = isInternalTopic(name)
	out.AuthorizedOperations = ops
	for _, p := range t.PartitionIDs() {
		st := t.Partitions[p]
		rp := kmsg.NewMetadataResponseTopicPartition()
		rp.Partition = p
		rp.Leader = st.Leader
		rp.LeaderEpoch = st.LeaderEpoch
		rp.Replicas = slices.Clone(st.Replicas)
		rp.ISR = slices.Clone(st.ISR)
		rp.OfflineReplicas = []int32{}
		for _, r := range st.Replicas {
			if !replicaLive(im, r, listener) {
				rp.OfflineReplicas = append(rp.OfflineReplicas, r)
			}
		}
		if st.Leader == metadata.NoLeader || !replicaLive(im, st.Leader, listener) {
			rp.ErrorCode = kerr.LeaderNotAvailable.Code
			rp.Leader = metadata.NoLeader
		}
		out.Partitions = append(out.Partitions, rp)
	}
	return out
}

// replicaLive reports whether a replica's broker is registered, unfenced and
// reachable on the request's listener.
func replicaLive(im *metadata.Image, id int32, listener string) bool {
	b, ok := im.Broker(id)
	if !ok || b.Fenced {
		return false
	}
	_, ok = brokerEndpoint(b, listener)
	return ok
}

func brokerEndpoint(b *metadata.Broker, listener string) (metadata.Endpoint, bool) {
	for _, ep := range b.Endpoints {
		if ep.Name == listener {
			return ep, true
		}
	}
	return metadata.Endpoint{}, false
}

// liveControllerID is the controller id Metadata and DescribeCluster report
// (KIP-590: a live broker, since clients send controller requests to any
// broker, which forwards them); -1 when no broker is live.
func liveControllerID(im *metadata.Image, self int32) int32 {
	lowest := int32(-1)
	for _, id := range im.BrokerIDs() {
		b, _ := im.Broker(id)
		if b.Fenced {
			continue
		}
		if id == self {
			return self
		}
		if lowest == -1 {
			lowest = id
		}
	}
	return lowest
}

// autoCreateTopics creates the requested topics that do not exist, have a
// valid name and are not internal, with the broker's defaults, and returns
// the names created.
func autoCreateTopics(ctx context.Context, im *metadata.Image, admin AdminController, topics []kmsg.MetadataRequestTopic) []string {
	create := kmsg.NewPtrCreateTopicsRequest()
	create.Version = 7
	for _, rt := range topics {
		if rt.Topic == nil {
			continue
		}
		name := *rt.Topic
		if _, ok := im.Topic(name); ok || !isValidTopicName(name) || isInternalTopic(name) {
			continue
		}
		if slices.ContainsFunc(create.Topics, func(t kmsg.CreateTopicsRequestTopic) bool { return t.Topic == name }) {
			continue
		}
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic, t.NumPartitions, t.ReplicationFactor = name, -1, -1
		create.Topics = append(create.Topics, t)
	}
	if len(create.Topics) == 0 {
		return nil
	}
	resp, err := admin.CreateTopics(ctx, create)
	if err != nil {
		return nil
	}
	var created []string
	for _, t := range resp.Topics {
		if t.ErrorCode == 0 {
			created = append(created, t.Topic)
		}
	}
	return created
}

// isValidTopicName applies Kafka's topic name rules (Topic.validate).
func isValidTopicName(name string) bool {
	if name == "" || name == "." || name == ".." || len(name) > 249 {
		return false
	}
	for _, c := range []byte(name) {
		legal := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !legal {
			return false
		}
	}
	return true
}
