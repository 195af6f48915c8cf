package quorumctl

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/metadata"
)

// AssignReplicasToDirs records which log dir holds each named replica of a
// broker (KIP-858). A request-level failure (directory assignment off,
// unknown broker, stale epoch) is returned as an error wrapping Kafka's.
func (c *QuorumController) AssignReplicasToDirs(ctx context.Context, req *kmsg.AssignReplicasToDirsRequest) (*kmsg.AssignReplicasToDirsResponse, error) {
	if err := c.notActive(); err != nil {
		return nil, err
	}
	type result struct {
		resp *kmsg.AssignReplicasToDirsResponse
		err  error
	}
	r, err := runOp(ctx, c, false, func(im *metadata.Image) ([]metadata.Record, result) {
		recs, resp, err := c.opts.Logic.AssignReplicasToDirs(im, req)
		return recs, result{resp, err}
	})
	if err != nil {
		return nil, err
	}
	return r.resp, r.err
}
