package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/controller/quorumctl"
)

// UpdateFeatures finalizes feature levels on the active controller.
func (c *ControllerChannel) UpdateFeatures(ctx context.Context, req *kmsg.UpdateFeaturesRequest) (*kmsg.UpdateFeaturesResponse, error) {
	return route(ctx, c, req, func(q *quorumctl.QuorumController) (*kmsg.UpdateFeaturesResponse, error) {
		return q.UpdateFeatures(ctx, req)
	})
}
