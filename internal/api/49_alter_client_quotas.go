package api

// AlterClientQuotas (key 49), versions 0-1: the pinned Kafka release's
// range.
//
// Behaviour as Kafka's (ClientQuotaControlManager): per entity (a user, a
// client id, both, or an ip, each a name or the default) its keys are set
// or removed: producer_byte_rate, consumer_byte_rate, request_percentage
// and controller_mutation_rate for users and client ids,
// connection_creation_rate for ips; values must be finite and above 0,
// whole for the integral keys; each refusal is INVALID_REQUEST for the
// entity; validate_only writes nothing. The change goes through the
// active controller and the answer waits until this node's image has it.
//
// Deviations: Kafka accepts an ip entity that is a resolvable host name;
// the controller resolves nothing, so only addresses are accepted. The
// quotas are stored, not yet enforced (throttle times stay 0).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func newAlterClientQuotasHandler(admin AdminController) Handler {
	return Handler{
		Key:        49,
		MinVersion: 0,
		MaxVersion: 1,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.AlterClientQuotasRequest)
			// Kafka asks ALTER_CONFIGS on CLUSTER and answers
			// CLUSTER_AUTHORIZATION_FAILED for every entity.
			resp, err := (*kmsg.AlterClientQuotasResponse)(nil), req.clusterRefusal(opAlterConfigs)
			if err == nil {
				resp, err = admin.AlterClientQuotas(ctx, body)
			}
			if err != nil {
				resp = kmsg.NewPtrAlterClientQuotasResponse()
				code, msg := ControllerErrorCode(err), errorMessage(err)
				for _, e := range body.Entries {
					r := kmsg.NewAlterClientQuotasResponseEntry()
					r.ErrorCode, r.ErrorMessage = code, msg
					for _, p := range e.Entity {
						r.Entity = append(r.Entity, kmsg.AlterClientQuotasResponseEntryEntity{Type: p.Type, Name: p.Name})
					}
					resp.Entries = append(resp.Entries, r)
				}
			}
			resp.SetVersion(body.Version)
			return Reply(resp)
		},
	}
}
