package quorumctl

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/controller"
	"github.com/sluice-io/sluice/internal/metadata"
)

// AwaitLeadership waits until this voter leads: a single voter campaigns
// at once, so this takes one round of its own disk writes.
func (c *QuorumController) AwaitLeadership(ctx context.Context) error {
	for {
		changed := c.opts.Quorum.StatusChanged()
		if c.Active() {
			return nil
		}
		if err := c.waitChange(ctx, changed); err != nil {
			return err
		}
	}
}

// waitChange waits for the quorum's status to change.
func (c *QuorumController) waitChange(ctx context.Context, changed <-chan struct{}) error {
	select {
	case <-changed:
		return nil
	case <-c.opts.Quorum.Done():
		return fmt.Errorf("metadata quorum: %w", c.opts.Quorum.Err())
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Bootstrap writes a new cluster's first records (the cluster id, then the
// finalized features, as records builds them) when the log names no
// cluster yet, and otherwise checks that it names clusterID.
func (c *QuorumController) Bootstrap(ctx context.Context, clusterID string, records []metadata.Record) error {
	_, err := controller.Apply(ctx, c.runner, func(im *metadata.Image) ([]metadata.Record, error) {
		if im.ClusterID() != "" {
			return nil, errAlreadyBootstrapped
		}
		return records, nil
	})
	if err != nil && !errors.Is(err, errAlreadyBootstrapped) {
		return err
	}
	if id := c.opts.Image().ClusterID(); id != clusterID {
		return fmt.Errorf("metadata log holds cluster id %s but meta.properties says %s", id, clusterID)
	}
	return nil
}

// AwaitBootstrap waits until some leader has bootstrapped the metadata log
// (doing it while this voter leads) and checks the log's cluster id.
func (c *QuorumController) AwaitBootstrap(ctx context.Context, clusterID string, records []metadata.Record) error {
	for {
		changed := c.opts.Quorum.StatusChanged()
		if c.opts.Image().ClusterID() != "" {
			return c.Bootstrap(ctx, clusterID, records)
		}
		if c.Active() {
			err := c.Bootstrap(ctx, clusterID, records)
			if err == nil || !errors.Is(err, controller.ErrNotController) {
				return err
			}
		}
		if err := c.waitChange(ctx, changed); err != nil {
			return err
		}
	}
}

// RegisterSoleBroker registers the broker of a single node and unfences
// it. A registration of an earlier process of this node that is still
// unfenced is fenced first: this node is the only voter and holds the log
// dir locks, so no other process can be that broker (Kafka waits for the
// old registration's session to time out instead).
// It returns the new broker epoch.
func (c *QuorumController) RegisterSoleBroker(ctx context.Context, req *kmsg.BrokerRegistrationRequest) (int64, error) {
	id := req.BrokerID
	_, err := controller.Apply(ctx, c.runner, func(im *metadata.Image) ([]metadata.Record, error) {
		old, ok := im.Broker(id)
		if !ok || old.Fenced {
			return nil, nil
		}
		return []metadata.Record{&metadata.FenceBrokerRecord{BrokerID: id, BrokerEpoch: old.Epoch}}, nil
	})
	if err != nil {
		return -1, fmt.Errorf("fence the previous registration of broker %d: %w", id, err)
	}
	resp, _, err := controller.Run(ctx, c.runner, func(im *metadata.Image) ([]metadata.Record, *kmsg.BrokerRegistrationResponse) {
		return c.opts.Logic.RegisterBroker(im, req)
	})
	if err != nil {
		return -1, fmt.Errorf("register broker %d: %w", id, err)
	}
	if resp.ErrorCode != 0 {
		return -1, fmt.Errorf("register broker %d: %w", id, kerr.ErrorForCode(resp.ErrorCode))
	}
	_, err = controller.Apply(ctx, c.runner, func(im *metadata.Image) ([]metadata.Record, error) {
		return c.opts.Logic.UnfenceBroker(im, id, resp.BrokerEpoch)
	})
	if err != nil {
		return -1, fmt.Errorf("unfence broker %d: %w", id, err)
	}
	return resp.BrokerEpoch, nil
}
