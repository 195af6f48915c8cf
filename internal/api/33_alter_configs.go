package api

// AlterConfigs (key 33), versions 0-2: the pinned Kafka release's range.
//
// Behaviour as Kafka's: each resource's explicit config set is replaced by
// the request's; topic configs are validated with the topic key table
// (INVALID_CONFIG naming the key), broker configs must be dynamically
// updatable; validate_only changes nothing. Topic changes reach the open
// partition logs without a restart once committed (the node reacts to the
// metadata delta).
//
// Authorization: ALTER_CONFIGS on the resource, as Kafka (authz_configs.go).
//
// GROUP resources replace a group's dynamic configs, as Kafka 4.4 allows
// here too (validated as IncrementalAlterConfigs validates them).
//
// BROKER_LOGGER resources are refused with INVALID_REQUEST "Unknown resource
// type 8", as Kafka's preprocessing does (only IncrementalAlterConfigs
// changes log levels).
//
// Deviations: none known.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func newAlterConfigsHandler(admin AdminController) Handler {
	return Handler{
		Key:        33,
		MinVersion: 0,
		MaxVersion: 2,
		Handle: func(ctx context.Context, req *Request) Response {
			body, denied := authorizeAlterConfigs(req, req.Body.(*kmsg.AlterConfigsRequest))
			body, refused := refuseLegacyBrokerLoggers(body)
			denied = append(denied, refused...)
			resp, err := kmsg.NewPtrAlterConfigsResponse(), error(nil)
			if len(body.Resources) > 0 || len(denied) == 0 {
				resp, err = admin.AlterConfigs(ctx, body)
			}
			if err != nil {
				resp = kmsg.NewPtrAlterConfigsResponse()
				code, msg := ControllerErrorCode(err), errorMessage(err)
				for _, r := range body.Resources {
					rr := kmsg.NewAlterConfigsResponseResource()
					rr.ResourceType, rr.ResourceName, rr.ErrorCode, rr.ErrorMessage = r.ResourceType, r.ResourceName, code, msg
					resp.Resources = append(resp.Resources, rr)
				}
			}
			resp.Resources = append(resp.Resources, denied...)
			resp.SetVersion(body.Version)
			return Reply(resp)
		},
	}
}
