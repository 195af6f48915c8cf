package node

// KIP-919's --bootstrap-controller: admin clients talk to the controllers'
// CONTROLLER listeners directly. There DescribeCluster lists the
// controllers and names the quorum leader as the active controller
// (api.ControllerDirectory), and DescribeQuorum is answered by the leader
// only (controllerQuorum), as Kafka's controllers do; the admin client goes
// to the controller DescribeCluster named.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/internal/api"
)

// IsControllerListener implements api.ControllerDirectory.
func (n *Node) IsControllerListener(name string) bool { return isControllerListener(n.cfg, name) }

// Controllers implements api.ControllerDirectory: the voters' CONTROLLER
// endpoints from controller.quorum.voters and the quorum leader.
func (n *Node) Controllers(string) (int32, []api.ControllerEndpoint) {
	var out []api.ControllerEndpoint
	for _, v := range n.cfg.Voters() {
		out = append(out, api.ControllerEndpoint{NodeID: v.ID, Host: v.Host, Port: int32(v.Port)})
	}
	return n.quorumStatus().Leader, out
}

// controllerQuorum answers DescribeQuorum on the CONTROLLER listeners: the
// leader describes the quorum, any other voter answers
// NOT_LEADER_OR_FOLLOWER (with the leader it knows), which the admin client
// retries at the active controller. Broker listeners forward instead
// (Node.DescribeQuorum).
type controllerQuorum struct{ n *Node }

func (c controllerQuorum) DescribeQuorum(_ context.Context, req *kmsg.DescribeQuorumRequest) (*kmsg.DescribeQuorumResponse, error) {
	if c.n.driver.Status().IsLeader {
		return c.n.describeQuorum(req), nil
	}
	return api.NotQuorumLeader(req, c.n.driver.Status().Leader), nil
}
