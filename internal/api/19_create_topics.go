package api

// CreateTopics (key 19), versions 2-7: the pinned Kafka release's range
// (Kafka 4.0 dropped v0-1, KIP-896).
//
// Behaviour as Kafka's: the active controller validates names, counts,
// replica assignments and configs (through config.ResolveTopic: a bad key or
// value is INVALID_CONFIG naming it); -1 partitions or replication factor
// mean num.partitions and default.replication.factor; validate_only answers
// the same without creating anything. v5+ answers the partition count,
// replication factor and the topic's configs (every topic key with its
// effective value and source), v7+ the topic id. The answer is sent once the
// topic's records are committed and applied, so a following Metadata sees it.
//
// Authorization as Kafka's controller: CREATE on the cluster or on the
// topic (else TOPIC_AUTHORIZATION_FAILED), DESCRIBE_CONFIGS on the topic to
// see its configs (else they are empty and the config error code is
// TOPIC_AUTHORIZATION_FAILED); see authz_topics.go.
//
// Deviations: timeout_ms bounds the wait for the commit only; a request that
// outlives it gets REQUEST_TIMED_OUT for every topic even though the topics
// may still be created (Kafka behaves the same when its controller is slow).

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/config"
)

func newCreateTopicsHandler(cfg *config.Config, admin AdminController) Handler {
	return Handler{
		Key:        19,
		MinVersion: 2,
		MaxVersion: 7,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.CreateTopicsRequest)
			allowed, denied := authorizeCreateTopics(req, body)
			var resp *kmsg.CreateTopicsResponse
			if len(allowed.Topics) > 0 || len(denied) == 0 {
				resp = createTopics(ctx, cfg, admin, allowed)
			} else {
				resp = kmsg.NewPtrCreateTopicsResponse()
				resp.SetVersion(body.Version)
			}
			hideUndescribableConfigs(req, resp)
			resp.Topics = append(resp.Topics, denied...)
			return Reply(resp)
		},
	}
}

func createTopics(ctx context.Context, cfg *config.Config, admin AdminController, req *kmsg.CreateTopicsRequest) *kmsg.CreateTopicsResponse {
	ctx, cancel := requestTimeout(ctx, req.TimeoutMillis)
	defer cancel()
	resp, err := admin.CreateTopics(ctx, req)
	if err != nil {
		resp = kmsg.NewPtrCreateTopicsResponse()
		code, msg := ControllerErrorCode(err), errorMessage(err)
		for _, t := range req.Topics {
			rt := kmsg.NewCreateTopicsResponseTopic()
			rt.Topic, rt.ErrorCode, rt.ErrorMessage = t.Topic, code, msg
			rt.NumPartitions, rt.ReplicationFactor = -1, -1
			resp.Topics = append(resp.Topics, rt)
		}
	}
	resp.SetVersion(req.Version)
	if req.Version < 5 {
		return resp
	}
	requested := make(map[string]map[string]string, len(req.Topics))
	for _, t := range req.Topics {
		overrides := map[string]string{}
		for _, c := range t.Configs {
			if c.Value != nil {
				overrides[c.Name] = *c.Value
			}
		}
		requested[t.Topic] = overrides
	}
	for i := range resp.Topics {
		rt := &resp.Topics[i]
		if rt.ErrorCode != 0 {
			// Kafka sends a failed topic's configs as an empty array, not null.
			rt.Configs = []kmsg.CreateTopicsResponseTopicConfig{}
			continue
		}
		for _, e := range cfg.DescribeTopic(requested[rt.Topic], nil) {
			c := kmsg.NewCreateTopicsResponseTopicConfig()
			c.Name, c.Value, c.ReadOnly, c.Source, c.IsSensitive = e.Name, e.Value, e.ReadOnly, int8(e.Source), e.Sensitive
			rt.Configs = append(rt.Configs, c)
		}
	}
	return resp
}

// requestTimeout bounds ctx by a request's timeout_ms when it is positive.
func requestTimeout(ctx context.Context, timeoutMillis int32) (context.Context, context.CancelFunc) {
	if timeoutMillis <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, time.Duration(timeoutMillis)*time.Millisecond)
}
