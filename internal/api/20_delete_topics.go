package api

// DeleteTopics (key 20), versions 1-6: the pinned Kafka release's range
// (Kafka 4.0 dropped v0, KIP-896).
//
// Behaviour as Kafka's: topics by name (v1-5 topic_names, v6 topics with a
// name) or by id (v6); unknown names get UNKNOWN_TOPIC_OR_PARTITION, unknown
// ids UNKNOWN_TOPIC_ID; the answer is sent once the removal is committed and
// applied, after which the node deletes the partition logs. With
// delete.topic.enable=false every topic gets TOPIC_DELETION_DISABLED.
//
// Authorization as Kafka's controller (authz_topics.go): DELETE on the
// cluster, or DESCRIBE and DELETE on each topic, else
// TOPIC_AUTHORIZATION_FAILED (by id, without the name unless describable).
//
// Deviations: none known.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/metadata"
)

func newDeleteTopicsHandler(cfg *config.Config, admin AdminController, view MetadataView) Handler {
	return Handler{
		Key:        20,
		MinVersion: 1,
		MaxVersion: 6,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.DeleteTopicsRequest)
			var im *metadata.Image
			if view != nil {
				im = view.Image()
			}
			// Disabled deletion refuses the request before authorization.
			allowed, denied := body, []kmsg.DeleteTopicsResponseTopic(nil)
			if cfg.Bool(config.DeleteTopicEnable) {
				allowed, denied = authorizeDeleteTopics(req, im, body)
			}
			var resp *kmsg.DeleteTopicsResponse
			if len(allowed.TopicNames)+len(allowed.Topics) > 0 || len(denied) == 0 {
				resp = deleteTopics(ctx, cfg, admin, allowed)
			} else {
				resp = kmsg.NewPtrDeleteTopicsResponse()
				resp.SetVersion(body.Version)
			}
			resp.Topics = append(resp.Topics, denied...)
			return Reply(resp)
		},
	}
}

func deleteTopics(ctx context.Context, cfg *config.Config, admin AdminController, req *kmsg.DeleteTopicsRequest) *kmsg.DeleteTopicsResponse {
	ctx, cancel := requestTimeout(ctx, req.TimeoutMillis)
	defer cancel()
	var resp *kmsg.DeleteTopicsResponse
	var err error
	if cfg.Bool(config.DeleteTopicEnable) {
		resp, err = admin.DeleteTopics(ctx, req)
	} else {
		err = kerr.TopicDeletionDisabled
	}
	if err != nil {
		resp = kmsg.NewPtrDeleteTopicsResponse()
		code, msg := ControllerErrorCode(err), errorMessage(err)
		add := func(name *string, id [16]byte) {
			rt := kmsg.NewDeleteTopicsResponseTopic()
			rt.Topic, rt.TopicID, rt.ErrorCode, rt.ErrorMessage = name, id, code, msg
			resp.Topics = append(resp.Topics, rt)
		}
		for _, name := range req.TopicNames {
			add(&name, [16]byte{})
		}
		for _, t := range req.Topics {
			add(t.Topic, t.TopicID)
		}
	}
	resp.SetVersion(req.Version)
	return resp
}
