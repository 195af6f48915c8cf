package api

// DescribeUserScramCredentials (key 50), version 0: the pinned Kafka
// release's range.
//
// Behaviour as Kafka's (ScramImage.describe over this node's published
// image): each user's mechanisms and iteration counts, never the salt or
// the keys; a null or empty user list describes every user with a
// credential; a user without one is RESOURCE_NOT_FOUND, a user asked twice
// DUPLICATE_RESOURCE.
//
// Deviations: results come in request order (all users: sorted), where
// Kafka's follow hash order.

import (
	"context"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/metadata"
)

func newDescribeUserSCRAMCredentialsHandler(view MetadataView) Handler {
	return Handler{
		Key:        50,
		MinVersion: 0,
		MaxVersion: 0,
		Handle: func(_ context.Context, req *Request) Response {
			body := req.Body.(*kmsg.DescribeUserSCRAMCredentialsRequest)
			// Kafka asks DESCRIBE on CLUSTER and answers
			// CLUSTER_AUTHORIZATION_FAILED for the request.
			if !req.authorizeCluster(opDescribe) {
				resp := kmsg.NewPtrDescribeUserSCRAMCredentialsResponse()
				resp.SetVersion(body.Version)
				resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, codeMessage(kerr.ClusterAuthorizationFailed.Code)
				// Kafka's getErrorResponse: a result per requested user,
				// its name left empty (Kafka leaves a null list unanswered).
				for range body.Users {
					r := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
					r.ErrorCode, r.ErrorMessage = resp.ErrorCode, resp.ErrorMessage
					resp.Results = append(resp.Results, r)
				}
				return Reply(resp)
			}
			return Reply(describeUserSCRAMCredentials(view.Image(), body))
		},
	}
}

func describeUserSCRAMCredentials(im *metadata.Image, req *kmsg.DescribeUserSCRAMCredentialsRequest) *kmsg.DescribeUserSCRAMCredentialsResponse {
	resp := kmsg.NewPtrDescribeUserSCRAMCredentialsResponse()
	resp.SetVersion(req.Version)
	users := im.ScramUsers()
	asked := map[string]int{}
	if len(req.Users) > 0 {
		users = users[:0:0]
		for _, u := range req.Users {
			if asked[u.Name] == 0 {
				users = append(users, u.Name)
			}
			asked[u.Name]++
		}
	}
	for _, user := range users {
		r := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		r.User = user
		creds := im.ScramCredentials(user)
		switch {
		case asked[user] > 1:
			r.ErrorCode, r.ErrorMessage = kerr.DuplicateResource.Code, stringPtr("Cannot describe SCRAM credentials for the same user twice in a single request: "+user)
		case len(creds) == 0:
			r.ErrorCode, r.ErrorMessage = kerr.ResourceNotFound.Code, stringPtr("Attempt to describe a user credential that does not exist: "+user)
		}
		if r.ErrorCode == 0 {
			for _, m := range slices.Sorted(maps.Keys(creds)) {
				info := kmsg.NewDescribeUserSCRAMCredentialsResponseResultCredentialInfo()
				info.Mechanism, info.Iterations = int8(m), creds[m].Iterations
				r.CredentialInfos = append(r.CredentialInfos, info)
			}
		}
		resp.Results = append(resp.Results, r)
	}
	return resp
}
