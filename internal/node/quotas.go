package node

import (
	"fmt"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/quota"
)

// clientQuotas builds the broker's client quota managers over the
// published metadata image's quota records (internal/quota), with Kafka's
// quota.window.* and controller.quota.window.* sampling, and registers
// their metrics.
func (n *Node) clientQuotas() (*quota.Managers, error) {
	q := quota.New(quota.Options{
		Config: quota.Config{
			Samples:  int(n.cfg.Int(config.QuotaWindowNum)),
			WindowMs: int64(n.cfg.Int(config.QuotaWindowSizeSeconds)) * 1000,
		},
		ControllerConfig: quota.Config{
			Samples:  int(n.cfg.Int(config.ControllerQuotaWindowNum)),
			WindowMs: int64(n.cfg.Int(config.ControllerQuotaWindowSizeSeconds)) * 1000,
		},
		Clock:  n.clk,
		Images: n.Image,
	})
	if err := q.Register(n.metrics); err != nil {
		return nil, fmt.Errorf("client quota metrics: %w", err)
	}
	return q, nil
}
