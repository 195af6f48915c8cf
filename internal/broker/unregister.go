package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/controller/quorumctl"
)

// UnregisterBroker removes a broker's registration on the active
// controller (forwarded, as Kafka's brokers forward key 64).
func (c *ControllerChannel) UnregisterBroker(ctx context.Context, req *kmsg.UnregisterBrokerRequest) (*kmsg.UnregisterBrokerResponse, error) {
	return route(ctx, c, req, func(q *quorumctl.QuorumController) (*kmsg.UnregisterBrokerResponse, error) {
		return q.UnregisterBroker(ctx, req)
	})
}
