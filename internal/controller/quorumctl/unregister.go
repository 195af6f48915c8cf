package quorumctl

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/metadata"
)

// UnregisterBroker removes a broker's registration (key 64).
func (c *QuorumController) UnregisterBroker(ctx context.Context, req *kmsg.UnregisterBrokerRequest) (*kmsg.UnregisterBrokerResponse, error) {
	return runOp(ctx, c, true, func(im *metadata.Image) ([]metadata.Record, *kmsg.UnregisterBrokerResponse) {
		return c.opts.Logic.UnregisterBroker(im, req)
	})
}
