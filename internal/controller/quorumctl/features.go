package quorumctl

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/controller"
	"github.com/sluice-io/sluice/internal/metadata"
)

// UpdateFeatures finalizes feature levels (key 57); a request that only
// validates proposes nothing.
func (c *QuorumController) UpdateFeatures(ctx context.Context, req *kmsg.UpdateFeaturesRequest) (*kmsg.UpdateFeaturesResponse, error) {
	return runOp(ctx, c, true, func(im *metadata.Image) ([]metadata.Record, *kmsg.UpdateFeaturesResponse) {
		return controller.UpdateFeatures(im, req, c.opts.NodeID)
	})
}
