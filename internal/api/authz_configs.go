package api

// Authorization of the config APIs as Kafka's ConfigHelper (DescribeConfigs)
// and ControllerApis.authorizeAlterResource (AlterConfigs,
// IncrementalAlterConfigs; checked on the broker before forwarding, see
// authz_topics.go): broker, broker logger and client metrics resources
// need the operation on the cluster (CLUSTER_AUTHORIZATION_FAILED), a
// topic on the topic (TOPIC_AUTHORIZATION_FAILED), a group on the group
// (GROUP_AUTHORIZATION_FAILED). Refused resources are answered here and
// left out of what the handler (or the controller) sees.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/metadata"
)

// configRefusal returns the code refusing op on a config resource, or 0.
// Types Kafka does not authorize are left to the handler's own refusal.
func (r *Request) configRefusal(op metadata.ACLOperation, t kmsg.ConfigResourceType, name string) int16 {
	switch t {
	case kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger, kmsg.ConfigResourceTypeClientMetrics:
		if !r.authorizeCluster(op) {
			return kerr.ClusterAuthorizationFailed.Code
		}
	case kmsg.ConfigResourceTypeTopic:
		if !r.authorize(op, resTopic, name) {
			return kerr.TopicAuthorizationFailed.Code
		}
	case kmsg.ConfigResourceTypeGroupConfig:
		if !r.authorize(op, resGroup, name) {
			return kerr.GroupAuthorizationFailed.Code
		}
	}
	return 0
}

// codeMessage is Kafka's error message for a refusal (Errors.message).
func codeMessage(code int16) *string {
	return kmsg.StringPtr(kerr.ErrorForCode(code).(*kerr.Error).Description)
}

// authorizeDescribeConfigs splits req into the resources the principal may
// DESCRIBE_CONFIGS and the answers of the others (no configs).
func authorizeDescribeConfigs(r *Request, req *kmsg.DescribeConfigsRequest) (*kmsg.DescribeConfigsRequest, []kmsg.DescribeConfigsResponseResource) {
	out := *req
	out.Resources = nil
	var denied []kmsg.DescribeConfigsResponseResource
	for _, res := range req.Resources {
		code := r.configRefusal(opDescribeConfigs, res.ResourceType, res.ResourceName)
		if code == 0 {
			out.Resources = append(out.Resources, res)
			continue
		}
		rr := kmsg.NewDescribeConfigsResponseResource()
		rr.ResourceType, rr.ResourceName, rr.ErrorCode, rr.ErrorMessage = res.ResourceType, res.ResourceName, code, codeMessage(code)
		rr.Configs = []kmsg.DescribeConfigsResponseResourceConfig{}
		denied = append(denied, rr)
	}
	return &out, denied
}

// configKey identifies a resource for the duplicate check, which the
// controller makes before authorizing.
type configKey struct {
	t    kmsg.ConfigResourceType
	name string
}

// authorizeAlterConfigs splits req into the resources the principal may
// ALTER_CONFIGS (duplicates included: the controller refuses them) and
// the answers of the others.
func authorizeAlterConfigs(r *Request, req *kmsg.AlterConfigsRequest) (*kmsg.AlterConfigsRequest, []kmsg.AlterConfigsResponseResource) {
	count := map[configKey]int{}
	for _, res := range req.Resources {
		count[configKey{res.ResourceType, res.ResourceName}]++
	}
	out := *req
	out.Resources = nil
	var denied []kmsg.AlterConfigsResponseResource
	for _, res := range req.Resources {
		code := r.configRefusal(opAlterConfigs, res.ResourceType, res.ResourceName)
		if code == 0 || count[configKey{res.ResourceType, res.ResourceName}] > 1 {
			out.Resources = append(out.Resources, res)
			continue
		}
		rr := kmsg.NewAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName, rr.ErrorCode, rr.ErrorMessage = res.ResourceType, res.ResourceName, code, codeMessage(code)
		denied = append(denied, rr)
	}
	return &out, denied
}

// authorizeIncrementalAlterConfigs is authorizeAlterConfigs for
// IncrementalAlterConfigs.
func authorizeIncrementalAlterConfigs(r *Request, req *kmsg.IncrementalAlterConfigsRequest) (*kmsg.IncrementalAlterConfigsRequest, []kmsg.IncrementalAlterConfigsResponseResource) {
	count := map[configKey]int{}
	for _, res := range req.Resources {
		count[configKey{res.ResourceType, res.ResourceName}]++
	}
	out := *req
	out.Resources = nil
	var denied []kmsg.IncrementalAlterConfigsResponseResource
	for _, res := range req.Resources {
		code := r.configRefusal(opAlterConfigs, res.ResourceType, res.ResourceName)
		if code == 0 || count[configKey{res.ResourceType, res.ResourceName}] > 1 {
			out.Resources = append(out.Resources, res)
			continue
		}
		rr := kmsg.NewIncrementalAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName, rr.ErrorCode, rr.ErrorMessage = res.ResourceType, res.ResourceName, code, codeMessage(code)
		denied = append(denied, rr)
	}
	return &out, denied
}

// authorizeCreatePartitions splits req into the topics the principal may
// ALTER (duplicates included: the controller refuses them) and the
// answers of the others, TOPIC_AUTHORIZATION_FAILED.
func authorizeCreatePartitions(r *Request, req *kmsg.CreatePartitionsRequest) (*kmsg.CreatePartitionsRequest, []kmsg.CreatePartitionsResponseTopic) {
	count := map[string]int{}
	for _, t := range req.Topics {
		count[t.Topic]++
	}
	out := *req
	out.Topics = nil
	var denied []kmsg.CreatePartitionsResponseTopic
	for _, t := range req.Topics {
		if count[t.Topic] > 1 || r.authorize(opAlter, resTopic, t.Topic) {
			out.Topics = append(out.Topics, t)
			continue
		}
		rt := kmsg.NewCreatePartitionsResponseTopic()
		rt.Topic, rt.ErrorCode = t.Topic, kerr.TopicAuthorizationFailed.Code
		denied = append(denied, rt)
	}
	return &out, denied
}
