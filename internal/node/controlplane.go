package node

// The node implements api.ControlPlane: controller operations go through the
// control loop, reads come from the published metadata image.

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/internal/api"
	"sluice/internal/config"
	"sluice/internal/metadata"
)

// NodeID implements api.ControlPlane.
func (n *Node) NodeID() int32 { return n.cfg.NodeID() }

// Config implements api.ControlPlane.
func (n *Node) Config() *config.Config { return n.cfg }

// Image implements api.ControlPlane: the latest published metadata image.
func (n *Node) Image() *metadata.Image { return n.loader.Image() }

// CreateTopics implements api.ControlPlane.
func (n *Node) CreateTopics(ctx context.Context, req *kmsg.CreateTopicsRequest) (*kmsg.CreateTopicsResponse, error) {
	return forwardOr(ctx, n, req, func() (*kmsg.CreateTopicsResponse, error) { return n.localCreateTopics(ctx, req) })
}

func (n *Node) localCreateTopics(ctx context.Context, req *kmsg.CreateTopicsRequest) (*kmsg.CreateTopicsResponse, error) {
	var resp *kmsg.CreateTopicsResponse
	err := n.control.submit(ctx, func(im *metadata.Image) ([]metadata.Record, error) {
		var recs []metadata.Record
		recs, resp = n.ctrl.CreateTopics(im, req)
		return recs, nil
	})
	return resp, err
}

// DeleteTopics implements api.ControlPlane.
func (n *Node) DeleteTopics(ctx context.Context, req *kmsg.DeleteTopicsRequest) (*kmsg.DeleteTopicsResponse, error) {
	return forwardOr(ctx, n, req, func() (*kmsg.DeleteTopicsResponse, error) { return n.localDeleteTopics(ctx, req) })
}

func (n *Node) localDeleteTopics(ctx context.Context, req *kmsg.DeleteTopicsRequest) (*kmsg.DeleteTopicsResponse, error) {
	var resp *kmsg.DeleteTopicsResponse
	err := n.control.submit(ctx, func(im *metadata.Image) ([]metadata.Record, error) {
		var recs []metadata.Record
		recs, resp = n.ctrl.DeleteTopics(im, req)
		return recs, nil
	})
	return resp, err
}

// CreatePartitions implements api.ControlPlane.
func (n *Node) CreatePartitions(ctx context.Context, req *kmsg.CreatePartitionsRequest) (*kmsg.CreatePartitionsResponse, error) {
	return forwardOr(ctx, n, req, func() (*kmsg.CreatePartitionsResponse, error) { return n.localCreatePartitions(ctx, req) })
}

func (n *Node) localCreatePartitions(ctx context.Context, req *kmsg.CreatePartitionsRequest) (*kmsg.CreatePartitionsResponse, error) {
	var resp *kmsg.CreatePartitionsResponse
	err := n.control.submit(ctx, func(im *metadata.Image) ([]metadata.Record, error) {
		var recs []metadata.Record
		recs, resp = n.ctrl.CreatePartitions(im, req)
		return recs, nil
	})
	return resp, err
}

// AlterConfigs implements api.ControlPlane.
func (n *Node) AlterConfigs(ctx context.Context, req *kmsg.AlterConfigsRequest) (*kmsg.AlterConfigsResponse, error) {
	return forwardOr(ctx, n, req, func() (*kmsg.AlterConfigsResponse, error) { return n.localAlterConfigs(ctx, req) })
}

func (n *Node) localAlterConfigs(ctx context.Context, req *kmsg.AlterConfigsRequest) (*kmsg.AlterConfigsResponse, error) {
	var resp *kmsg.AlterConfigsResponse
	err := n.control.submit(ctx, func(im *metadata.Image) ([]metadata.Record, error) {
		var recs []metadata.Record
		recs, resp = n.ctrl.AlterConfigs(im, req)
		return recs, nil
	})
	return resp, err
}

// IncrementalAlterConfigs implements api.ControlPlane.
func (n *Node) IncrementalAlterConfigs(ctx context.Context, req *kmsg.IncrementalAlterConfigsRequest) (*kmsg.IncrementalAlterConfigsResponse, error) {
	return forwardOr(ctx, n, req, func() (*kmsg.IncrementalAlterConfigsResponse, error) { return n.localIncrementalAlterConfigs(ctx, req) })
}

func (n *Node) localIncrementalAlterConfigs(ctx context.Context, req *kmsg.IncrementalAlterConfigsRequest) (*kmsg.IncrementalAlterConfigsResponse, error) {
	var resp *kmsg.IncrementalAlterConfigsResponse
	err := n.control.submit(ctx, func(im *metadata.Image) ([]metadata.Record, error) {
		var recs []metadata.Record
		recs, resp = n.ctrl.IncrementalAlterConfigs(im, req)
		return recs, nil
	})
	return resp, err
}

// producerIDBlock is this broker's current block of producer ids.
type producerIDBlock struct {
	mu   sync.Mutex
	next int64
	end  int64 // exclusive; next == end means used up
}

// NextProducerID implements api.ControlPlane: ids come from blocks the
// controller allocates through the metadata log, so a restart never reuses
// one. The lock is held across an allocation so concurrent callers wait for
// one block instead of each taking one.
func (n *Node) NextProducerID(ctx context.Context) (int64, error) {
	b := &n.producerIDs
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.next < b.end {
		id := b.next
		b.next++
		return id, nil
	}
	broker, ok := n.Image().Broker(n.NodeID())
	if !ok {
		// Start-up: listeners open just before the broker registers.
		// Kafka answers a producer id request it cannot serve yet with
		// this retriable error.
		return 0, fmt.Errorf("allocate producer ids: broker %d is not registered yet: %w", n.NodeID(), kerr.CoordinatorLoadInProgress)
	}
	req := kmsg.NewPtrAllocateProducerIDsRequest()
	req.BrokerID, req.BrokerEpoch = broker.ID, broker.Epoch
	resp, err := forwardOr(ctx, n, req, func() (*kmsg.AllocateProducerIDsResponse, error) { return n.AllocateProducerIDs(ctx, req) })
	if err != nil {
		return 0, err
	}
	if resp.ErrorCode != 0 {
		return 0, fmt.Errorf("allocate producer ids: %w", kerr.ErrorForCode(resp.ErrorCode))
	}
	b.next, b.end = resp.ProducerIDStart+1, resp.ProducerIDStart+int64(resp.ProducerIDLen)
	return resp.ProducerIDStart, nil
}

// AllocateProducerIDs implements api.ControllerPlane: the next block of
// producer ids for a registered broker.
func (n *Node) AllocateProducerIDs(ctx context.Context, req *kmsg.AllocateProducerIDsRequest) (*kmsg.AllocateProducerIDsResponse, error) {
	if n.transport != nil && !n.driver.Status().IsLeader {
		return nil, api.ErrNotController
	}
	var resp *kmsg.AllocateProducerIDsResponse
	err := n.control.submit(ctx, func(im *metadata.Image) ([]metadata.Record, error) {
		var recs []metadata.Record
		recs, resp = n.ctrl.AllocateProducerIDs(im, req)
		return recs, nil
	})
	return resp, err
}

// FinalizedFeatures implements api.FeatureSource from the metadata image; the
// epoch is the image's offset, which only grows.
func (n *Node) FinalizedFeatures() (int64, []api.FinalizedFeature) {
	im := n.loader.Image()
	levels := im.Features()
	names := make([]string, 0, len(levels))
	for name := range levels {
		names = append(names, name)
	}
	slices.Sort(names)
	out := make([]api.FinalizedFeature, 0, len(names))
	for _, name := range names {
		if levels[name] > 0 {
			out = append(out, api.FinalizedFeature{Name: name, Level: levels[name]})
		}
	}
	return im.Offset(), out
}
