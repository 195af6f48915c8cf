package api

// AlterUserScramCredentials (key 51), version 0: the pinned Kafka
// release's range.
//
// Behaviour as Kafka's (ScramControlManager): deletions and upsertions per
// user; an upsertion carries the salt and the salted password the client
// computed, and the controller keeps the stored key and server key derived
// from it (RFC 5802), never the password; iterations within 4096..16384
// (UNACCEPTABLE_CREDENTIAL), known mechanisms (UNSUPPORTED_SASL_MECHANISM),
// deleting a credential that does not exist is RESOURCE_NOT_FOUND, a user
// twice in one request DUPLICATE_RESOURCE. The change goes through the
// active controller and the answer waits until this node's image has it.
//
// Deviations: results come in request order (Kafka's follow hash order).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func newAlterUserSCRAMCredentialsHandler(admin AdminController) Handler {
	return Handler{
		Key:        51,
		MinVersion: 0,
		MaxVersion: 0,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.AlterUserSCRAMCredentialsRequest)
			// Kafka asks ALTER on CLUSTER and answers
			// CLUSTER_AUTHORIZATION_FAILED for every user.
			resp, err := (*kmsg.AlterUserSCRAMCredentialsResponse)(nil), req.clusterRefusal(opAlter)
			if err == nil {
				resp, err = admin.AlterUserScramCredentials(ctx, body)
			}
			if err != nil {
				resp = scramErrorResponse(body, ControllerErrorCode(err), errorMessage(err))
			}
			resp.SetVersion(body.Version)
			return Reply(resp)
		},
	}
}

// scramErrorResponse answers every user of the request once with code.
func scramErrorResponse(req *kmsg.AlterUserSCRAMCredentialsRequest, code int16, msg *string) *kmsg.AlterUserSCRAMCredentialsResponse {
	resp := kmsg.NewPtrAlterUserSCRAMCredentialsResponse()
	seen := map[string]bool{}
	add := func(user string) {
		if seen[user] {
			return
		}
		seen[user] = true
		r := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		r.User, r.ErrorCode, r.ErrorMessage = user, code, msg
		resp.Results = append(resp.Results, r)
	}
	for _, d := range req.Deletions {
		add(d.Name)
	}
	for _, u := range req.Upsertions {
		add(u.Name)
	}
	return resp
}
