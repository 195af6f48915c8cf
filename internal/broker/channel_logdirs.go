package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/controller/quorumctl"
)

// AssignReplicasToDirs tells the active controller which log dir holds each
// named replica of this broker (KIP-858).
func (c *ControllerChannel) AssignReplicasToDirs(ctx context.Context, req *kmsg.AssignReplicasToDirsRequest) (*kmsg.AssignReplicasToDirsResponse, error) {
	return route(ctx, c, req, func(q *quorumctl.QuorumController) (*kmsg.AssignReplicasToDirsResponse, error) {
		return q.AssignReplicasToDirs(ctx, req)
	})
}
