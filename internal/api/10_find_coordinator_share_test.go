package api

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/runtime"
)

type fakeShareLocator struct{ keys []string }

func (f *fakeShareLocator) FindCoordinator(_ context.Context, key, _ string) (runtime.Node, int16) {
	f.keys = append(f.keys, key)
	if key == "bad" {
		return runtime.Node{NodeID: -1, Port: -1}, kerr.InvalidRequest.Code
	}
	return runtime.Node{NodeID: 3, Host: "h3", Port: 9093}, 0
}

func shareKeysRequest(keys ...string) (*kmsg.FindCoordinatorRequest, *kmsg.FindCoordinatorResponse) {
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.SetVersion(6)
	req.CoordinatorType, req.CoordinatorKeys = coordinatorKeyShare, keys
	resp := kmsg.NewPtrFindCoordinatorResponse()
	for _, k := range keys {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key, c.ErrorCode = k, kerr.InvalidRequest.Code
		resp.Coordinators = append(resp.Coordinators, c)
	}
	return req, resp
}

func TestFindShareCoordinators(t *testing.T) {
	loc := &fakeShareLocator{}
	req, resp := shareKeysRequest("g:AAAAAAAAAAAAAAAAAAAAAQ:0", "bad")
	findShareCoordinators(context.Background(), loc, "PLAINTEXT", req, resp, true)
	if c := resp.Coordinators[0]; c.ErrorCode != 0 || c.NodeID != 3 || c.Host != "h3" || c.Port != 9093 {
		t.Fatalf("share key: %+v", c)
	}
	if c := resp.Coordinators[1]; c.ErrorCode != kerr.InvalidRequest.Code || c.NodeID != -1 {
		t.Fatalf("bad key: %+v", c)
	}

	req, resp = shareKeysRequest("g:AAAAAAAAAAAAAAAAAAAAAQ:0")
	findShareCoordinators(context.Background(), loc, "PLAINTEXT", req, resp, false)
	if c := resp.Coordinators[0]; c.ErrorCode != kerr.ClusterAuthorizationFailed.Code || c.NodeID != -1 {
		t.Fatalf("without CLUSTER_ACTION: %+v", c)
	}
	if len(loc.keys) != 2 {
		t.Fatalf("the coordinator was asked %d times, want 2 (never without CLUSTER_ACTION)", len(loc.keys))
	}

	req, resp = shareKeysRequest("g:AAAAAAAAAAAAAAAAAAAAAQ:0")
	findShareCoordinators(context.Background(), nil, "PLAINTEXT", req, resp, true)
	if c := resp.Coordinators[0]; c.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("without a share coordinator: %+v", c)
	}
}
