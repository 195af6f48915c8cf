package api

// Authorization of CreateTopics and DeleteTopics, which Kafka's KRaft
// controller does (ControllerApis.createTopics, deleteTopics) with the
// client's principal from the forwarding envelope. Sluice's brokers
// forward the request itself, so they authorize it before forwarding: the
// refused topics are answered here and only the others go to the
// controller, which then sees the broker's principal (a super user).

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// clusterMetadataTopic is the metadata log's name, refused by the
// controller whatever the ACLs.
const clusterMetadataTopic = "__cluster_metadata"

// authorizeCreateTopics removes from req the topics the principal may not
// create (CREATE on the cluster or on the topic; duplicates and the
// metadata topic are left to the controller's own refusals) and returns
// their answers, TOPIC_AUTHORIZATION_FAILED "Authorization failed.".
func authorizeCreateTopics(r *Request, req *kmsg.CreateTopicsRequest) (allowed *kmsg.CreateTopicsRequest, denied []kmsg.CreateTopicsResponseTopic) {
	if r.authorizeCluster(opCreate) {
		return req, nil
	}
	count := map[string]int{}
	for _, t := range req.Topics {
		count[t.Topic]++
	}
	out := *req
	out.Topics = nil
	for _, t := range req.Topics {
		if count[t.Topic] > 1 || t.Topic == clusterMetadataTopic || r.authorize(opCreate, resTopic, t.Topic) {
			out.Topics = append(out.Topics, t)
			continue
		}
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic, rt.ErrorCode = t.Topic, kerr.TopicAuthorizationFailed.Code
		rt.ErrorMessage = kmsg.StringPtr("Authorization failed.")
		rt.NumPartitions, rt.ReplicationFactor = -1, -1
		rt.Configs = []kmsg.CreateTopicsResponseTopicConfig{}
		denied = append(denied, rt)
	}
	return &out, denied
}

// hideUndescribableConfigs clears the configs of created topics the
// principal may not DESCRIBE_CONFIGS, answering
// TOPIC_AUTHORIZATION_FAILED in their config error code (v5+).
func hideUndescribableConfigs(r *Request, resp *kmsg.CreateTopicsResponse) {
	if resp.Version < 5 {
		return
	}
	for i := range resp.Topics {
		rt := &resp.Topics[i]
		if rt.ErrorCode == 0 && !r.authorize(opDescribeConfigs, resTopic, rt.Topic) {
			rt.Configs = []kmsg.CreateTopicsResponseTopicConfig{}
			rt.ConfigErrorCode = kerr.TopicAuthorizationFailed.Code
		}
	}
}

// authorizeDeleteTopics removes from req the topics the principal may not
// delete and returns their answers, as ControllerApis.deleteTopics: a name
// it may not DESCRIBE, or an existing one it may not DELETE, is
// TOPIC_AUTHORIZATION_FAILED (a missing describable one goes on, to be
// UNKNOWN_TOPIC_OR_PARTITION); an id of a topic it may not DELETE is
// TOPIC_AUTHORIZATION_FAILED, with the name only when it may DESCRIBE it.
// DELETE on the cluster allows every topic.
func authorizeDeleteTopics(r *Request, im *metadata.Image, req *kmsg.DeleteTopicsRequest) (allowed *kmsg.DeleteTopicsRequest, denied []kmsg.DeleteTopicsResponseTopic) {
	if !r.hasAuthorizer() || r.authorizeCluster(opDelete) {
		return req, nil
	}
	deny := func(name *string, id [16]byte) {
		rt := kmsg.NewDeleteTopicsResponseTopic()
		rt.Topic, rt.TopicID, rt.ErrorCode = name, id, kerr.TopicAuthorizationFailed.Code
		denied = append(denied, rt)
	}
	nameRefused := func(name string) bool {
		if !r.authorize(opDescribe, resTopic, name) {
			return true
		}
		_, exists := topicByName(im, name)
		return exists && !r.authorize(opDelete, resTopic, name)
	}
	out := *req
	out.TopicNames = slices.DeleteFunc(slices.Clone(req.TopicNames), func(name string) bool {
		if nameRefused(name) {
			deny(kmsg.StringPtr(name), [16]byte{})
			return true
		}
		return false
	})
	out.Topics = slices.DeleteFunc(slices.Clone(req.Topics), func(t kmsg.DeleteTopicsRequestTopic) bool {
		if t.Topic != nil {
			if t.TopicID == ([16]byte{}) && nameRefused(*t.Topic) {
				deny(t.Topic, [16]byte{})
				return true
			}
			return false
		}
		name, known := topicNameByID(im, t.TopicID)
		if !known || r.authorize(opDelete, resTopic, name) {
			return false
		}
		if r.authorize(opDescribe, resTopic, name) {
			deny(kmsg.StringPtr(name), t.TopicID)
		} else {
			deny(nil, t.TopicID)
		}
		return true
	})
	return &out, denied
}

func topicByName(im *metadata.Image, name string) (*metadata.Topic, bool) {
	if im == nil {
		return nil, false
	}
	return im.Topic(name)
}

func topicNameByID(im *metadata.Image, id [16]byte) (string, bool) {
	if im == nil {
		return "", false
	}
	t, ok := im.TopicByID(kafka.UUID(id))
	if !ok {
		return "", false
	}
	return t.Name, true
}
