package api

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// stubMembership answers every voter change with DUPLICATE_VOTER, so a
// test sees the handler passed the request on.
type stubMembership struct{}

func (stubMembership) AddRaftVoter(context.Context, *kmsg.AddRaftVoterRequest) *kmsg.AddRaftVoterResponse {
	r := kmsg.NewPtrAddRaftVoterResponse()
	r.ErrorCode = kerr.DuplicateVoter.Code
	return r
}

func (stubMembership) RemoveRaftVoter(context.Context, *kmsg.RemoveRaftVoterRequest) *kmsg.RemoveRaftVoterResponse {
	r := kmsg.NewPtrRemoveRaftVoterResponse()
	r.ErrorCode = kerr.VoterNotFound.Code
	return r
}

func (stubMembership) UpdateRaftVoter(context.Context, *kmsg.UpdateRaftVoterRequest) *kmsg.UpdateRaftVoterResponse {
	r := kmsg.NewPtrUpdateRaftVoterResponse()
	r.ErrorCode = kerr.VoterNotFound.Code
	return r
}

// TestRaftVoterHandlersPassOnAndKeepTheVersion: each handler answers at
// the request's version with what the quorum said.
func TestRaftVoterHandlersPassOnAndKeepTheVersion(t *testing.T) {
	ctx := context.Background()
	add := kmsg.NewPtrAddRaftVoterRequest()
	add.Version = 1
	resp := newAddRaftVoterHandler(stubMembership{}).Handle(ctx, &Request{Body: add})
	if r := resp.body.(*kmsg.AddRaftVoterResponse); r.ErrorCode != kerr.DuplicateVoter.Code || r.Version != 1 {
		t.Fatalf("AddRaftVoter: %+v", r)
	}
	rm := kmsg.NewPtrRemoveRaftVoterRequest()
	resp = newRemoveRaftVoterHandler(stubMembership{}).Handle(ctx, &Request{Body: rm})
	if r := resp.body.(*kmsg.RemoveRaftVoterResponse); r.ErrorCode != kerr.VoterNotFound.Code {
		t.Fatalf("RemoveRaftVoter: %+v", r)
	}
	up := kmsg.NewPtrUpdateRaftVoterRequest()
	resp = newUpdateRaftVoterHandler(stubMembership{}).Handle(ctx, &Request{Body: up})
	if r := resp.body.(*kmsg.UpdateRaftVoterResponse); r.ErrorCode != kerr.VoterNotFound.Code {
		t.Fatalf("UpdateRaftVoter: %+v", r)
	}
}
