package api

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// controllerDirectory lists voters 1-3 with leader 2.
type controllerDirectory struct {
	leader int32
}

func (d controllerDirectory) Controllers(string) (int32, []ControllerEndpoint) {
	return d.leader, []ControllerEndpoint{{NodeID: 1, Host: "c1", Port: 9093}, {NodeID: 2, Host: "c2", Port: 9093}, {NodeID: 3, Host: "c3", Port: 9093}}
}

// TestDescribeClusterOnControllerListener: KIP-919's controller endpoints
// on a CONTROLLER listener (the quorum leader as controller id); broker
// endpoints are not served there, and a broker listener of the same node
// still describes the brokers.
func TestDescribeClusterOnControllerListener(t *testing.T) {
	f := newFakeController(t, 4)
	dir := controllerDirectory{leader: 2}
	req := kmsg.NewPtrDescribeClusterRequest()
	req.SetVersion(1)
	req.EndpointType = endpointTypeControllers
	resp := describeControllers(f, dir, "CONTROLLER", req)
	if resp.ErrorCode != 0 || resp.ControllerID != 2 || resp.EndpointType != endpointTypeControllers || resp.ClusterID != "test-cluster" {
		t.Fatalf("controllers: %+v", resp)
	}
	if len(resp.Brokers) != 3 || resp.Brokers[0].NodeID != 1 || resp.Brokers[2].Host != "c3" || resp.Brokers[1].Port != 9093 {
		t.Fatalf("controller endpoints: %+v", resp.Brokers)
	}

	for _, v := range []int16{0, 1, 2} {
		req := kmsg.NewPtrDescribeClusterRequest()
		req.SetVersion(v)
		req.EndpointType = endpointTypeBrokers
		resp := describeControllers(f, dir, "CONTROLLER", req)
		if resp.ErrorCode != kerr.UnsupportedEndpointType.Code || len(resp.Brokers) != 0 {
			t.Fatalf("v%d broker endpoints on a controller listener: %+v", v, resp)
		}
	}

	req.EndpointType = endpointTypeBrokers
	resp = describeCluster(f.cfg.NodeID(), f, "PLAINTEXT", req)
	if resp.ErrorCode != 0 || len(resp.Brokers) != 1 || resp.Brokers[0].NodeID != 4 {
		t.Fatalf("brokers on the broker listener: %+v", resp)
	}
}
