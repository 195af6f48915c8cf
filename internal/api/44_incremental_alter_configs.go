package api

// IncrementalAlterConfigs (key 44), versions 0-1: the pinned Kafka release's
// range.
//
// Behaviour as Kafka's: per key SET, DELETE, APPEND and SUBTRACT (the last
// two on list keys only, INVALID_CONFIG otherwise); the resulting set is
// validated as AlterConfigs validates it; validate_only changes nothing.
// Topic changes reach the open partition logs without a restart.
//
// Authorization: ALTER_CONFIGS on the resource, as Kafka (authz_configs.go).
//
// GROUP resources (type 32) SET or DELETE a group's dynamic configs
// (Kafka 4.4's GroupConfig keys, each within the broker's group.*.min/max
// bounds), whether or not the group exists; APPEND and SUBTRACT are
// refused for every group key, as Kafka refuses them.
//
// BROKER_LOGGER resources (KIP-412) change this node's log levels at once,
// here, not through the controller (broker_loggers.go): SET a level
// (TRACE, DEBUG, INFO, WARN, ERROR, FATAL) on "root" or a component's
// logger, DELETE to make a component follow root again.
//
// Deviations: none known.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/logging"
)

func newIncrementalAlterConfigsHandler(admin AdminController, cfg *config.Config, loggers *logging.Levels) Handler {
	self := nodeIDOf(cfg)
	return Handler{
		Key:        44,
		MinVersion: 0,
		MaxVersion: 1,
		Handle: func(ctx context.Context, req *Request) Response {
			body, denied := authorizeIncrementalAlterConfigs(req, req.Body.(*kmsg.IncrementalAlterConfigsRequest))
			body, local := alterBrokerLoggers(loggers, self, body)
			denied = append(denied, local...)
			resp, err := kmsg.NewPtrIncrementalAlterConfigsResponse(), error(nil)
			if len(body.Resources) > 0 || len(denied) == 0 {
				resp, err = admin.IncrementalAlterConfigs(ctx, body)
			}
			if err != nil {
				resp = kmsg.NewPtrIncrementalAlterConfigsResponse()
				code, msg := ControllerErrorCode(err), errorMessage(err)
				for _, r := range body.Resources {
					rr := kmsg.NewIncrementalAlterConfigsResponseResource()
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
