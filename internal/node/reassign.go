package node

// Partition reassignment requests: computed by the active controller like
// CreateTopics, so a broker forwards them there.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/internal/metadata"
)

// AlterPartitionReassignments implements api.PartitionReassigner.
func (n *Node) AlterPartitionReassignments(ctx context.Context, req *kmsg.AlterPartitionAssignmentsRequest) (*kmsg.AlterPartitionAssignmentsResponse, error) {
	return forwardOr(ctx, n, req, func() (*kmsg.AlterPartitionAssignmentsResponse, error) {
		var resp *kmsg.AlterPartitionAssignmentsResponse
		err := n.control.submit(ctx, func(im *metadata.Image) ([]metadata.Record, error) {
			var recs []metadata.Record
			recs, resp = n.ctrl.AlterPartitionReassignments(im, req)
			return recs, nil
		})
		return resp, err
	})
}

// ListPartitionReassignments implements api.PartitionReassigner. It runs on
// the control loop so it sees every change committed before it.
func (n *Node) ListPartitionReassignments(ctx context.Context, req *kmsg.ListPartitionReassignmentsRequest) (*kmsg.ListPartitionReassignmentsResponse, error) {
	return forwardOr(ctx, n, req, func() (*kmsg.ListPartitionReassignmentsResponse, error) {
		var resp *kmsg.ListPartitionReassignmentsResponse
		err := n.control.submit(ctx, func(im *metadata.Image) ([]metadata.Record, error) {
			resp = n.ctrl.ListPartitionReassignments(im, req)
			return nil, nil
		})
		return resp, err
	})
}
