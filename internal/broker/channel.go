package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/controller"
	"github.com/sluice-io/sluice/internal/controller/quorumctl"
)

// ControllerChannel reaches the active controller: this node's own
// QuorumController when it is the active one (or the only voter), the
// ForwardingManager otherwise. The broker listener's admin handlers, the
// lifecycle manager, the producer id blocks and the ISR sender all go
// through it.
type ControllerChannel struct {
	local *quorumctl.QuorumController // nil on a dedicated broker
	fwd   *ForwardingManager          // nil on a single node
}

// NewControllerChannel routes to local (nil on a dedicated broker) or
// through fwd (nil on a single node, whose controller is always local).
func NewControllerChannel(local *quorumctl.QuorumController, fwd *ForwardingManager) *ControllerChannel {
	return &ControllerChannel{local: local, fwd: fwd}
}

// isLocal reports whether this node's controller serves the request.
func (c *ControllerChannel) isLocal() bool {
	return c.local != nil && (c.fwd == nil || c.local.Active())
}

// route runs local on this node's controller or forwards req.
func route[Resp kmsg.Response](ctx context.Context, c *ControllerChannel, req kmsg.Request, local func(*quorumctl.QuorumController) (Resp, error)) (Resp, error) {
	if c.isLocal() {
		return local(c.local)
	}
	if c.fwd == nil {
		var zero Resp
		return zero, controller.ErrNotController
	}
	return forward[Resp](ctx, c.fwd, req)
}

// CreateTopics creates topics on the active controller.
func (c *ControllerChannel) CreateTopics(ctx context.Context, req *kmsg.CreateTopicsRequest) (*kmsg.CreateTopicsResponse, error) {
	return route(ctx, c, req, func(q *quorumctl.QuorumController) (*kmsg.CreateTopicsResponse, error) {
		return q.CreateTopics(ctx, req)
	})
}

// DeleteTopics deletes topics on the active controller.
func (c *ControllerChannel) DeleteTopics(ctx context.Context, req *kmsg.DeleteTopicsRequest) (*kmsg.DeleteTopicsResponse, error) {
	return route(ctx, c, req, func(q *quorumctl.QuorumController) (*kmsg.DeleteTopicsResponse, error) {
		return q.DeleteTopics(ctx, req)
	})
}

// CreatePartitions adds partitions on the active controller.
func (c *ControllerChannel) CreatePartitions(ctx context.Context, req *kmsg.CreatePartitionsRequest) (*kmsg.CreatePartitionsResponse, error) {
	return route(ctx, c, req, func(q *quorumctl.QuorumController) (*kmsg.CreatePartitionsResponse, error) {
		return q.CreatePartitions(ctx, req)
	})
}

// AlterConfigs replaces configs on the active controller.
func (c *ControllerChannel) AlterConfigs(ctx context.Context, req *kmsg.AlterConfigsRequest) (*kmsg.AlterConfigsResponse, error) {
	return route(ctx, c, req, func(q *quorumctl.QuorumController) (*kmsg.AlterConfigsResponse, error) {
		return q.AlterConfigs(ctx, req)
	})
}

// IncrementalAlterConfigs changes configs on the active controller.
func (c *ControllerChannel) IncrementalAlterConfigs(ctx context.Context, req *kmsg.IncrementalAlterConfigsRequest) (*kmsg.IncrementalAlterConfigsResponse, error) {
	return route(ctx, c, req, func(q *quorumctl.QuorumController) (*kmsg.IncrementalAlterConfigsResponse, error) {
		return q.IncrementalAlterConfigs(ctx, req)
	})
}

// ElectLeaders runs elections on the active controller.
func (c *ControllerChannel) ElectLeaders(ctx context.Context, req *kmsg.ElectLeadersRequest) (*kmsg.ElectLeadersResponse, error) {
	return route(ctx, c, req, func(q *quorumctl.QuorumController) (*kmsg.ElectLeadersResponse, error) {
		return q.ElectLeaders(ctx, req)
	})
}

// AlterPartitionReassignments starts or cancels reassignments.
func (c *ControllerChannel) AlterPartitionReassignments(ctx context.Context, req *kmsg.AlterPartitionAssignmentsRequest) (*kmsg.AlterPartitionAssignmentsResponse, error) {
	return route(ctx, c, req, func(q *quorumctl.QuorumController) (*kmsg.AlterPartitionAssignmentsResponse, error) {
		return q.AlterPartitionReassignments(ctx, req)
	})
}

// ListPartitionReassignments lists reassignments in progress.
func (c *ControllerChannel) ListPartitionReassignments(ctx context.Context, req *kmsg.ListPartitionReassignmentsRequest) (*kmsg.ListPartitionReassignmentsResponse, error) {
	return route(ctx, c, req, func(q *quorumctl.QuorumController) (*kmsg.ListPartitionReassignmentsResponse, error) {
		return q.ListPartitionReassignments(ctx, req)
	})
}

// DescribeQuorum describes the quorum from the active controller.
func (c *ControllerChannel) DescribeQuorum(ctx context.Context, req *kmsg.DescribeQuorumRequest) (*kmsg.DescribeQuorumResponse, error) {
	return route(ctx, c, req, func(q *quorumctl.QuorumController) (*kmsg.DescribeQuorumResponse, error) {
		return q.DescribeQuorum(ctx, req)
	})
}

// BrokerRegistration registers a broker with the active controller.
func (c *ControllerChannel) BrokerRegistration(ctx context.Context, req *kmsg.BrokerRegistrationRequest) (*kmsg.BrokerRegistrationResponse, error) {
	return route(ctx, c, req, func(q *quorumctl.QuorumController) (*kmsg.BrokerRegistrationResponse, error) {
		return q.BrokerRegistration(ctx, req)
	})
}

// BrokerHeartbeat sends a broker's heartbeat to the active controller.
func (c *ControllerChannel) BrokerHeartbeat(ctx context.Context, req *kmsg.BrokerHeartbeatRequest) (*kmsg.BrokerHeartbeatResponse, error) {
	return route(ctx, c, req, func(q *quorumctl.QuorumController) (*kmsg.BrokerHeartbeatResponse, error) {
		return q.BrokerHeartbeat(ctx, req)
	})
}

// AllocateProducerIDs asks the active controller for a block of ids.
func (c *ControllerChannel) AllocateProducerIDs(ctx context.Context, req *kmsg.AllocateProducerIDsRequest) (*kmsg.AllocateProducerIDsResponse, error) {
	return route(ctx, c, req, func(q *quorumctl.QuorumController) (*kmsg.AllocateProducerIDsResponse, error) {
		return q.AllocateProducerIDs(ctx, req)
	})
}

// AlterPartition sends a leader's ISR change to the active controller.
func (c *ControllerChannel) AlterPartition(ctx context.Context, req *kmsg.AlterPartitionRequest) (*kmsg.AlterPartitionResponse, error) {
	return route(ctx, c, req, func(q *quorumctl.QuorumController) (*kmsg.AlterPartitionResponse, error) {
		return q.AlterPartition(ctx, req)
	})
}

// AlterUserScramCredentials changes SCRAM credentials on the active controller.
func (c *ControllerChannel) AlterUserScramCredentials(ctx context.Context, req *kmsg.AlterUserSCRAMCredentialsRequest) (*kmsg.AlterUserSCRAMCredentialsResponse, error) {
	return route(ctx, c, req, func(q *quorumctl.QuorumController) (*kmsg.AlterUserSCRAMCredentialsResponse, error) {
		return q.AlterUserScramCredentials(ctx, req)
	})
}

// CreateAcls adds ACL bindings on the active controller.
func (c *ControllerChannel) CreateAcls(ctx context.Context, req *kmsg.CreateACLsRequest) (*kmsg.CreateACLsResponse, error) {
	return route(ctx, c, req, func(q *quorumctl.QuorumController) (*kmsg.CreateACLsResponse, error) {
		return q.CreateAcls(ctx, req)
	})
}

// DeleteAcls removes ACL bindings on the active controller.
func (c *ControllerChannel) DeleteAcls(ctx context.Context, req *kmsg.DeleteACLsRequest) (*kmsg.DeleteACLsResponse, error) {
	return route(ctx, c, req, func(q *quorumctl.QuorumController) (*kmsg.DeleteACLsResponse, error) {
		return q.DeleteAcls(ctx, req)
	})
}

// AlterClientQuotas changes client quotas on the active controller.
func (c *ControllerChannel) AlterClientQuotas(ctx context.Context, req *kmsg.AlterClientQuotasRequest) (*kmsg.AlterClientQuotasResponse, error) {
	return route(ctx, c, req, func(q *quorumctl.QuorumController) (*kmsg.AlterClientQuotasResponse, error) {
		return q.AlterClientQuotas(ctx, req)
	})
}
