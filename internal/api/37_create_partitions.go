package api

// CreatePartitions (key 37), versions 0-3: the pinned Kafka release's range.
//
// Behaviour as Kafka's: the active controller checks the new count (it may
// only grow: INVALID_PARTITIONS), explicit assignments
// (INVALID_REPLICA_ASSIGNMENT) and unknown topics
// (UNKNOWN_TOPIC_OR_PARTITION); validate_only creates nothing. The answer is
// sent once the new partitions are committed and applied.
//
// Authorization: ALTER on each topic, as Kafka, else
// TOPIC_AUTHORIZATION_FAILED (authz_configs.go).
//
// Deviations: none known.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func newCreatePartitionsHandler(admin AdminController) Handler {
	return Handler{
		Key:        37,
		MinVersion: 0,
		MaxVersion: 3,
		Handle: func(ctx context.Context, req *Request) Response {
			body, denied := authorizeCreatePartitions(req, req.Body.(*kmsg.CreatePartitionsRequest))
			var resp *kmsg.CreatePartitionsResponse
			if len(body.Topics) > 0 || len(denied) == 0 {
				resp = createPartitions(ctx, admin, body)
			} else {
				resp = kmsg.NewPtrCreatePartitionsResponse()
				resp.SetVersion(body.Version)
			}
			resp.Topics = append(resp.Topics, denied...)
			return Reply(resp)
		},
	}
}

func createPartitions(ctx context.Context, admin AdminController, req *kmsg.CreatePartitionsRequest) *kmsg.CreatePartitionsResponse {
	ctx, cancel := requestTimeout(ctx, req.TimeoutMillis)
	defer cancel()
	resp, err := admin.CreatePartitions(ctx, req)
	if err != nil {
		resp = kmsg.NewPtrCreatePartitionsResponse()
		code, msg := ControllerErrorCode(err), errorMessage(err)
		for _, t := range req.Topics {
			rt := kmsg.NewCreatePartitionsResponseTopic()
			rt.Topic, rt.ErrorCode, rt.ErrorMessage = t.Topic, code, msg
			resp.Topics = append(resp.Topics, rt)
		}
	}
	resp.SetVersion(req.Version)
	return resp
}
