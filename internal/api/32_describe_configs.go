package api

// DescribeConfigs (key 32), versions 1-4: the pinned Kafka release's range
// (Kafka 4.0 dropped v0, KIP-896).
//
// Behaviour as Kafka's: TOPIC resources list every topic key with its
// effective value and source (the topic's own configs over the broker's
// synonyms over Kafka's defaults); a BROKER resource named after this node
// lists the full broker key set (ksqlDB and others read it), the empty name
// the cluster-wide dynamic defaults only; synonyms with include_synonyms,
// documentation with include_documentation (v3+), types from v3. Sensitive
// values are null. An unknown topic is UNKNOWN_TOPIC_OR_PARTITION, a
// malformed topic name INVALID_TOPIC_EXCEPTION, another broker's id or an
// unknown resource type INVALID_REQUEST.
//
// Authorization: DESCRIBE_CONFIGS on the resource, as Kafka
// (authz_configs.go).
//
// GROUP resources (KIP-848, KIP-932) list every group key of Kafka 4.4's
// GroupConfig with the group's dynamic value (DYNAMIC_GROUP_CONFIG) over
// its broker synonym, whether or not the group exists; the empty name is
// INVALID_REQUEST, as Kafka (groupconfig_describe.go in internal/config).
//
// BROKER_LOGGER resources (KIP-412) named after this node list its loggers
// ("root" and one per component) with their levels (broker_loggers.go).
//
// Deviations: the loggers are Sluice's components, not Kafka's log4j
// class names.

import (
	"context"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/logging"
	"github.com/sluice-io/sluice/internal/metadata"
)

func newDescribeConfigsHandler(cfg *config.Config, view MetadataView, loggers *logging.Levels) Handler {
	return Handler{
		Key:        32,
		MinVersion: 1,
		MaxVersion: 4,
		Handle: func(_ context.Context, req *Request) Response {
			body, denied := authorizeDescribeConfigs(req, req.Body.(*kmsg.DescribeConfigsRequest))
			resp := describeConfigs(cfg, view, loggers, body)
			resp.Resources = append(resp.Resources, denied...)
			return Reply(resp)
		},
	}
}

func describeConfigs(static *config.Config, view MetadataView, loggers *logging.Levels, req *kmsg.DescribeConfigsRequest) *kmsg.DescribeConfigsResponse {
	resp := kmsg.NewPtrDescribeConfigsResponse()
	resp.SetVersion(req.Version)
	im := view.Image()
	cfg := effectiveBrokerConfig(static, im)
	self := strconv.Itoa(int(static.NodeID()))
	for _, r := range req.Resources {
		rr := kmsg.NewDescribeConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		var entries []config.ConfigEntry
		switch {
		case r.ResourceType == kmsg.ConfigResourceTypeTopic && !isValidTopicName(r.ResourceName):
			rr.ErrorCode = kerr.InvalidTopicException.Code
		case r.ResourceType == kmsg.ConfigResourceTypeTopic:
			if _, ok := im.Topic(r.ResourceName); !ok {
				rr.ErrorCode = kerr.UnknownTopicOrPartition.Code
				rr.ErrorMessage = stringPtr("") // Kafka's answer: an empty, not a null, message
				break
			}
			overrides := im.Configs(metadata.ConfigResource{Type: metadata.ConfigResourceTopic, Name: r.ResourceName})
			entries = cfg.DescribeTopic(overrides, r.ConfigNames)
		case r.ResourceType == kmsg.ConfigResourceTypeBroker && r.ResourceName == self:
			entries = cfg.DescribeBroker(r.ConfigNames)
		case r.ResourceType == kmsg.ConfigResourceTypeBroker && r.ResourceName == "":
			entries = cfg.DescribeBrokerDefault(r.ConfigNames)
		case r.ResourceType == kmsg.ConfigResourceTypeGroupConfig && r.ResourceName == "":
			rr.ErrorCode = kerr.InvalidRequest.Code
			rr.ErrorMessage = stringPtr("Group name must not be empty")
		case r.ResourceType == kmsg.ConfigResourceTypeGroupConfig:
			entries = cfg.DescribeGroup(im.GroupConfigs(r.ResourceName), r.ConfigNames)
		case r.ResourceType == kmsg.ConfigResourceTypeBrokerLogger:
			var msg *string
			rr.Configs, rr.ErrorCode, msg = describeBrokerLoggers(loggers, static.NodeID(), r)
			rr.ErrorMessage = msg
		case r.ResourceType == kmsg.ConfigResourceTypeBroker:
			rr.ErrorCode = kerr.InvalidRequest.Code
			rr.ErrorMessage = stringPtr("unexpected broker id, expected " + self + " or empty string, but received " + r.ResourceName)
		default:
			rr.ErrorCode = kerr.InvalidRequest.Code
			rr.ErrorMessage = stringPtr("unsupported resource type " + r.ResourceType.String())
		}
		// A null name list asks for every key, an empty one for none.
		if r.ConfigNames != nil && len(r.ConfigNames) == 0 {
			entries = nil
		}
		for _, e := range entries {
			rr.Configs = append(rr.Configs, describeConfigEntry(req, e))
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp
}

func describeConfigEntry(req *kmsg.DescribeConfigsRequest, e config.ConfigEntry) kmsg.DescribeConfigsResponseResourceConfig {
	c := kmsg.NewDescribeConfigsResponseResourceConfig()
	c.Name, c.Value, c.ReadOnly, c.IsDefault = e.Name, e.Value, e.ReadOnly, e.IsDefault()
	c.Source, c.IsSensitive, c.ConfigType = e.Source, e.Sensitive, e.Type
	if req.IncludeSynonyms {
		for _, s := range e.Synonyms {
			syn := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
			syn.Name, syn.Value, syn.Source = s.Name, s.Value, s.Source
			c.ConfigSynonyms = append(c.ConfigSynonyms, syn)
		}
	}
	if req.IncludeDocumentation {
		c.Documentation = e.Documentation
	}
	return c
}

// effectiveBrokerConfig is the static configuration with the dynamic broker
// layers of the metadata log on top. Values the controller accepted are
// valid, so an error here means the log holds keys this build refuses; the
// static configuration is then the best answer.
func effectiveBrokerConfig(static *config.Config, im *metadata.Image) *config.Config {
	perBroker := im.Configs(metadata.ConfigResource{Type: metadata.ConfigResourceBroker, Name: strconv.Itoa(int(static.NodeID()))})
	clusterDefault := im.Configs(metadata.ConfigResource{Type: metadata.ConfigResourceBroker, Name: ""})
	if len(perBroker) == 0 && len(clusterDefault) == 0 {
		return static
	}
	cfg, err := static.WithDynamic(perBroker, clusterDefault)
	if err != nil {
		return static
	}
	return cfg
}

func stringPtr(s string) *string { return &s }
