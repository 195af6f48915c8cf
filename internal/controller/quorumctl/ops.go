package quorumctl

// The operations: admin requests (answered once this node's broker side
// has the result), and the requests brokers send the active controller
// (registration, heartbeats, producer id blocks, ISR changes), which a voter
// that does not lead answers NOT_CONTROLLER.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/metadata"
)

// CreateTopics creates topics.
func (c *QuorumController) CreateTopics(ctx context.Context, req *kmsg.CreateTopicsRequest) (*kmsg.CreateTopicsResponse, error) {
	return runOp(ctx, c, true, func(im *metadata.Image) ([]metadata.Record, *kmsg.CreateTopicsResponse) {
		return c.opts.Logic.CreateTopics(im, req)
	})
}

// DeleteTopics deletes topics.
func (c *QuorumController) DeleteTopics(ctx context.Context, req *kmsg.DeleteTopicsRequest) (*kmsg.DeleteTopicsResponse, error) {
	return runOp(ctx, c, true, func(im *metadata.Image) ([]metadata.Record, *kmsg.DeleteTopicsResponse) {
		return c.opts.Logic.DeleteTopics(im, req)
	})
}

// CreatePartitions adds partitions to topics.
func (c *QuorumController) CreatePartitions(ctx context.Context, req *kmsg.CreatePartitionsRequest) (*kmsg.CreatePartitionsResponse, error) {
	return runOp(ctx, c, true, func(im *metadata.Image) ([]metadata.Record, *kmsg.CreatePartitionsResponse) {
		return c.opts.Logic.CreatePartitions(im, req)
	})
}

// AlterConfigs replaces resources' configs.
func (c *QuorumController) AlterConfigs(ctx context.Context, req *kmsg.AlterConfigsRequest) (*kmsg.AlterConfigsResponse, error) {
	return runOp(ctx, c, true, func(im *metadata.Image) ([]metadata.Record, *kmsg.AlterConfigsResponse) {
		return c.opts.Logic.AlterConfigs(im, req)
	})
}

// IncrementalAlterConfigs changes resources' configs key by key.
func (c *QuorumController) IncrementalAlterConfigs(ctx context.Context, req *kmsg.IncrementalAlterConfigsRequest) (*kmsg.IncrementalAlterConfigsResponse, error) {
	return runOp(ctx, c, true, func(im *metadata.Image) ([]metadata.Record, *kmsg.IncrementalAlterConfigsResponse) {
		return c.opts.Logic.IncrementalAlterConfigs(im, req)
	})
}

// ElectLeaders runs preferred or unclean elections.
func (c *QuorumController) ElectLeaders(ctx context.Context, req *kmsg.ElectLeadersRequest) (*kmsg.ElectLeadersResponse, error) {
	return runOp(ctx, c, true, func(im *metadata.Image) ([]metadata.Record, *kmsg.ElectLeadersResponse) {
		return c.opts.Logic.ElectLeaders(im, req)
	})
}

// AlterPartitionReassignments starts or cancels reassignments.
func (c *QuorumController) AlterPartitionReassignments(ctx context.Context, req *kmsg.AlterPartitionAssignmentsRequest) (*kmsg.AlterPartitionAssignmentsResponse, error) {
	return runOp(ctx, c, true, func(im *metadata.Image) ([]metadata.Record, *kmsg.AlterPartitionAssignmentsResponse) {
		return c.opts.Logic.AlterPartitionReassignments(im, req)
	})
}

// ListPartitionReassignments lists reassignments in progress. It runs on
// the runner so it sees every change committed before it.
func (c *QuorumController) ListPartitionReassignments(ctx context.Context, req *kmsg.ListPartitionReassignmentsRequest) (*kmsg.ListPartitionReassignmentsResponse, error) {
	return runOp(ctx, c, false, func(im *metadata.Image) ([]metadata.Record, *kmsg.ListPartitionReassignmentsResponse) {
		return nil, c.opts.Logic.ListPartitionReassignments(im, req)
	})
}

// BrokerRegistration registers a broker; its session starts.
func (c *QuorumController) BrokerRegistration(ctx context.Context, req *kmsg.BrokerRegistrationRequest) (*kmsg.BrokerRegistrationResponse, error) {
	if err := c.notActive(); err != nil {
		return nil, err
	}
	resp, err := runOp(ctx, c, false, func(im *metadata.Image) ([]metadata.Record, *kmsg.BrokerRegistrationResponse) {
		return c.opts.Logic.RegisterBroker(im, req)
	})
	if err == nil && resp.ErrorCode == 0 {
		c.sessions.Heard(req.BrokerID, c.opts.Clock.Now(), -1)
	}
	return resp, err
}

// BrokerHeartbeat keeps a broker's session and fences or unfences it.
func (c *QuorumController) BrokerHeartbeat(ctx context.Context, req *kmsg.BrokerHeartbeatRequest) (*kmsg.BrokerHeartbeatResponse, error) {
	if err := c.notActive(); err != nil {
		return nil, err
	}
	resp, err := runOp(ctx, c, false, func(im *metadata.Image) ([]metadata.Record, *kmsg.BrokerHeartbeatResponse) {
		return c.opts.Logic.BrokerHeartbeat(im, req)
	})
	if err == nil && resp.ErrorCode == 0 {
		c.sessions.Heard(req.BrokerID, c.opts.Clock.Now(), req.CurrentMetadataOffset)
	}
	return resp, err
}

// AllocateProducerIDs hands a registered broker its next block of ids.
func (c *QuorumController) AllocateProducerIDs(ctx context.Context, req *kmsg.AllocateProducerIDsRequest) (*kmsg.AllocateProducerIDsResponse, error) {
	if err := c.notActive(); err != nil {
		return nil, err
	}
	return runOp(ctx, c, false, func(im *metadata.Image) ([]metadata.Record, *kmsg.AllocateProducerIDsResponse) {
		return c.opts.Logic.AllocateProducerIDs(im, req)
	})
}

// AlterPartition checks a leader's ISR change and commits it.
func (c *QuorumController) AlterPartition(ctx context.Context, req *kmsg.AlterPartitionRequest) (*kmsg.AlterPartitionResponse, error) {
	if err := c.notActive(); err != nil {
		return nil, err
	}
	return runOp(ctx, c, false, func(im *metadata.Image) ([]metadata.Record, *kmsg.AlterPartitionResponse) {
		return c.opts.Logic.AlterPartition(im, req)
	})
}
