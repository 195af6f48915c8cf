package api

// ListConfigResources (key 74), versions 0-1 (KIP-1142; v0 was
// ListClientMetricsResources): the pinned Kafka release's range. Kafka's
// tools ask it for the groups with configs (kafka-configs --describe
// --entity-type groups without a name) and the client-metrics
// subscriptions (kafka-client-metrics --list, kafka-configs --entity-type
// client-metrics).
//
// Behaviour as Kafka 4.4's KafkaApis.handleListConfigResources: DESCRIBE_CONFIGS
// on the cluster or CLUSTER_AUTHORIZATION_FAILED; the types asked for, or
// every type the version supports when none is (v0: CLIENT_METRICS; v1:
// also GROUP, BROKER_LOGGER, BROKER, TOPIC); a type the version does not
// support answers UNSUPPORTED_VERSION with no resources. Groups are those
// with dynamic configs, brokers and broker loggers the registered brokers
// with the request's listener, topics every topic; in that order: groups,
// client metrics, broker loggers, brokers, topics.
//
// Client-metrics subscriptions (KIP-714) are not kept by Sluice, so that
// type always lists none.

import (
	"context"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/metadata"
)

// Kafka's ConfigResource.Type ids.
const (
	configTypeTopic         int8 = 2
	configTypeBroker        int8 = 4
	configTypeBrokerLogger  int8 = 8
	configTypeClientMetrics int8 = 16
	configTypeGroup         int8 = 32
)

func newListConfigResourcesHandler(view MetadataView) Handler {
	return Handler{
		Key:        74,
		MinVersion: 0,
		MaxVersion: 1,
		Handle: func(_ context.Context, req *Request) Response {
			body := req.Body.(*kmsg.ListConfigResourcesRequest)
			if !req.authorizeCluster(opDescribeConfigs) {
				resp := kmsg.NewPtrListConfigResourcesResponse()
				resp.SetVersion(body.Version)
				resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
				return Reply(resp)
			}
			return Reply(listConfigResources(view.Image(), req.Conn.Listener, body))
		},
	}
}

// supportedConfigTypes is ListConfigResourcesRequest.supportedResourceTypes.
func supportedConfigTypes(version int16) []int8 {
	if version == 0 {
		return []int8{configTypeClientMetrics}
	}
	return []int8{configTypeTopic, configTypeBroker, configTypeBrokerLogger, configTypeClientMetrics, configTypeGroup}
}

func listConfigResources(im *metadata.Image, listener string, req *kmsg.ListConfigResourcesRequest) *kmsg.ListConfigResourcesResponse {
	resp := kmsg.NewPtrListConfigResourcesResponse()
	resp.SetVersion(req.Version)
	supported := supportedConfigTypes(req.Version)
	types := req.ResourceTypes
	if len(types) == 0 {
		types = supported
	}
	for _, t := range types {
		if !slices.Contains(supported, t) {
			resp.ErrorCode = kerr.UnsupportedVersion.Code
			return resp
		}
	}
	add := func(t int8, name string) {
		r := kmsg.NewListConfigResourcesResponseConfigResource()
		r.Name, r.Type = name, t
		resp.ConfigResources = append(resp.ConfigResources, r)
	}
	if slices.Contains(types, configTypeGroup) {
		for _, g := range im.ConfiguredGroups() {
			add(configTypeGroup, g)
		}
	}
	for _, t := range []int8{configTypeBrokerLogger, configTypeBroker} {
		if !slices.Contains(types, t) {
			continue
		}
		for _, id := range im.BrokerIDs() {
			if b, _ := im.Broker(id); hasListener(b, listener) {
				add(t, strconv.Itoa(int(id)))
			}
		}
	}
	if slices.Contains(types, configTypeTopic) {
		for _, name := range im.TopicNames() {
			add(configTypeTopic, name)
		}
	}
	resp.ConfigResources = nonNilResources(resp.ConfigResources)
	return resp
}

func hasListener(b *metadata.Broker, listener string) bool {
	_, ok := brokerEndpoint(b, listener)
	return ok
}

// nonNilResources answers an empty array, not a null one.
func nonNilResources(rs []kmsg.ListConfigResourcesResponseConfigResource) []kmsg.ListConfigResourcesResponseConfigResource {
	if rs == nil {
		return []kmsg.ListConfigResourcesResponseConfigResource{}
	}
	return rs
}
