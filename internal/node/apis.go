package node

import (
	"context"
	"maps"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/internal/api"
	"sluice/internal/broker"
	"sluice/internal/config"
	"sluice/internal/metadata"
)

// brokerRegistry is the broker listeners' request handlers.
func (n *Node) brokerRegistry() (*api.Registry, error) {
	cp := n.controlPlane()
	return api.NewRegistry(api.Deps{
		Features:     cp,
		ClusterID:    n.clusterID,
		NodeID:       n.cfg.NodeID(),
		ControlPlane: cp,
		DataPlane: &api.DataPlaneDeps{
			Partitions:             n.broker.replicas,
			FetchSessionCacheSlots: int(n.cfg.Int(config.MaxIncrementalFetchSessionCacheSlots)),
			FetchMaxBytes:          n.cfg.Int(config.FetchMaxBytes),
			Clock:                  n.clk,
		},
		Groups: &api.GroupPlaneDeps{Coordinator: n.broker.groups, Image: n.Image},
	}, api.DescribeQuorumHandler(n.channel), api.ElectLeadersHandler(n.channel))
}

// controllerRegistry is the CONTROLLER listeners' request handlers: the
// control plane, the controller-only keys, the metadata log for observers.
func (n *Node) controllerRegistry() (*api.Registry, error) {
	cp := n.controlPlane()
	rel := api.WithFetchSnapshot(api.WithAlterPartition(api.ControllerRelease()))
	handlers := append(api.ControllerHandlers(n.ctrl, n.meta.logs),
		api.DescribeQuorumHandler(controllerQuorum{n}), api.ElectLeadersHandler(n.channel),
		api.AlterPartitionHandler(n.ctrl), api.FetchSnapshotHandler(n.meta.logs))
	return api.NewRegistry(api.Deps{
		Release:      &rel,
		Features:     cp,
		ClusterID:    n.clusterID,
		NodeID:       n.cfg.NodeID(),
		ControlPlane: cp,
	}, handlers...)
}

// controlPlane is what the control-plane handlers see of the node.
func (n *Node) controlPlane() *controlPlane {
	cp := &controlPlane{ControllerChannel: n.channel, n: n}
	if n.broker == nil {
		// A dedicated controller hands out producer ids as a broker would
		// (it has none: InitProducerId there answers a retriable error).
		cp.producerIDs = broker.NewProducerIDManager(n.cfg.NodeID(), n.Image, n.channel)
	} else {
		cp.producerIDs = n.broker.producerIDs
	}
	return cp
}

// controlPlane implements api.ControlPlane (admin operations through the
// controller channel), api.PartitionReassigner, api.FeatureSource and
// api.ControllerDirectory.
type controlPlane struct {
	*broker.ControllerChannel
	n           *Node
	producerIDs *broker.ProducerIDManager
}

func (c *controlPlane) NodeID() int32                   { return c.n.cfg.NodeID() }
func (c *controlPlane) Config() *config.Config          { return c.n.cfg }
func (c *controlPlane) Image() *metadata.Image          { return c.n.Image() }
func (c *controlPlane) LogDirs() []api.LogDirDescription { return c.n.storage.logs.describe() }

func (c *controlPlane) NextProducerID(ctx context.Context) (int64, error) {
	return c.producerIDs.NextProducerID(ctx)
}

// FinalizedFeatures reports the image's finalized features; the epoch is
// the image's offset, which only grows.
func (c *controlPlane) FinalizedFeatures() (int64, []api.FinalizedFeature) {
	im := c.n.Image()
	levels := im.Features()
	var out []api.FinalizedFeature
	for _, name := range slices.Sorted(maps.Keys(levels)) {
		if levels[name] > 0 {
			out = append(out, api.FinalizedFeature{Name: name, Level: levels[name]})
		}
	}
	return im.Offset(), out
}

// IsControllerListener implements api.ControllerDirectory (KIP-919).
func (c *controlPlane) IsControllerListener(name string) bool {
	return isControllerListener(c.n.cfg, name)
}

// Controllers implements api.ControllerDirectory: the voters' CONTROLLER
// endpoints from controller.quorum.voters and the quorum leader.
func (c *controlPlane) Controllers(string) (int32, []api.ControllerEndpoint) {
	var out []api.ControllerEndpoint
	for _, v := range c.n.cfg.Voters() {
		out = append(out, api.ControllerEndpoint{NodeID: v.ID, Host: v.Host, Port: int32(v.Port)})
	}
	return c.n.meta.view.Status().Leader, out
}

// controllerQuorum answers DescribeQuorum on the CONTROLLER listeners: the
// leader describes the quorum, any other voter answers
// NOT_LEADER_OR_FOLLOWER (with the leader it knows), which the admin client
// retries at the active controller. Broker listeners forward instead.
type controllerQuorum struct{ n *Node }

func (c controllerQuorum) DescribeQuorum(ctx context.Context, req *kmsg.DescribeQuorumRequest) (*kmsg.DescribeQuorumResponse, error) {
	if c.n.ctrl.Active() {
		return c.n.ctrl.DescribeQuorum(ctx, req)
	}
	return api.NotQuorumLeader(req, c.n.ctrl.Leader()), nil
}

// controllerMetrics keeps the controller server's series apart from the
// broker server's on the node's registry.
func controllerMetrics(reg prometheus.Registerer) prometheus.Registerer {
	return prometheus.WrapRegistererWithPrefix("controller_", reg)
}
