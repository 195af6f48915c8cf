package node

import (
	"maps"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-io/sluice/internal/api"
	"github.com/sluice-io/sluice/internal/broker"
	"github.com/sluice-io/sluice/internal/config"
)

// brokerRegistry is the broker listeners' request handlers.
func (n *Node) brokerRegistry() (*api.Registry, error) {
	quotas, err := n.clientQuotas()
	if err != nil {
		return nil, err
	}
	info, err := n.registryInfo()
	if err != nil {
		return nil, err
	}
	info.ConnClosed = func(c *api.ConnState) {
		// A share consumer's connection ends its share session, releasing
		// the records it held, as in Kafka.
		if key := api.ConnKey(c); key != "" && n.broker.shareFetch != nil {
			n.broker.shareFetch.ConnectionClosed(key)
		}
	}
	return api.NewRegistry(api.BrokerRelease(), info, n.hooked(api.BrokerHandlersWithQuotas(api.BrokerDeps{
		Config:      n.cfg,
		Metadata:    n,
		Admin:       n.channel,
		Membership:  brokerMembership{n},
		ProducerIDs: n.broker.producerIDs,
		LogDirs:     logDirs{n},
		Loggers:     n.logLevels(),
		Data: &api.DataPlaneDeps{
			Partitions:             n.broker.replicas,
			FetchSessionCacheSlots: int(n.cfg.Int(config.MaxIncrementalFetchSessionCacheSlots)),
			FetchMaxBytes:          n.cfg.Int(config.FetchMaxBytes),
			Markers:                n.broker.markers,
			Clock:                  n.clk,
		},
		Groups: &api.GroupPlaneDeps{Coordinator: n.broker.groups, TxnOffsets: n.broker.groups, Image: n.Image},
		Txns:   &api.TxnPlaneDeps{Coordinator: n.broker.txns, Image: n.Image},
		Shares: n.sharePlaneDeps(),
		Quotas: quotas,
	})))
}

// controllerRegistry is the CONTROLLER listeners' request handlers: the
// admin requests, the controller-only keys, the metadata log for observers.
func (n *Node) controllerRegistry() (*api.Registry, error) {
	info, err := n.registryInfo()
	if err != nil {
		return nil, err
	}
	return api.NewRegistry(api.ControllerListenerRelease(), info, n.hooked(api.ControllerHandlers(api.ControllerDeps{
		Config:      n.cfg,
		Metadata:    n,
		Admin:       n.channel,
		ProducerIDs: n.producerIDs(),
		LogDirs:     logDirs{n},
		Brokers:     n.ctrl,
		Quorum:      n.ctrl,
		Membership:  n.ctrl,
		MetadataLog: n.meta.logs,
		Controllers: controllerDirectory{n},
		Loggers:     n.logLevels(),
	})))
}

func (n *Node) registryInfo() (api.RegistryInfo, error) {
	authz, err := n.authorizer()
	if err != nil {
		return api.RegistryInfo{}, err
	}
	return api.RegistryInfo{ClusterID: n.clusterID, NodeID: n.cfg.NodeID(), Features: features{n}, Authorizer: authz, CapFeatures: true}, nil
}

// producerIDs is the broker's producer id manager; a dedicated controller
// hands out producer ids as a broker would (it has no broker: InitProducerId
// there answers a retriable error).
func (n *Node) producerIDs() *broker.ProducerIDManager {
	if n.broker == nil {
		return broker.NewProducerIDManager(n.cfg.NodeID(), n.Image, n.channel)
	}
	return n.broker.producerIDs
}

// features implements api.FeatureSource: the image's finalized features;
// the epoch is the image's offset, which only grows.
type features struct{ n *Node }

func (f features) FinalizedFeatures() (int64, []api.FinalizedFeature) {
	im := f.n.Image()
	levels := f.n.withKRaftVersion(im.Features())
	var out []api.FinalizedFeature
	for _, name := range slices.Sorted(maps.Keys(levels)) {
		if levels[name] > 0 {
			out = append(out, api.FinalizedFeature{Name: name, Level: levels[name]})
		}
	}
	return im.Offset(), out
}

// logDirs implements api.LogDirSource over the node's log dirs.
type logDirs struct{ n *Node }

func (l logDirs) LogDirs() []api.LogDirDescription { return l.n.storage.describe(l.n.cfg.LogDirs()) }

// controllerDirectory implements api.ControllerDirectory (KIP-919): the
// voters' CONTROLLER endpoints from controller.quorum.voters and the quorum
// leader.
type controllerDirectory struct{ n *Node }

func (c controllerDirectory) Controllers(string) (int32, []api.ControllerEndpoint) {
	var out []api.ControllerEndpoint
	for _, v := range c.n.cfg.Voters() {
		out = append(out, api.ControllerEndpoint{NodeID: v.ID, Host: v.Host, Port: int32(v.Port)})
	}
	if c.n.ctrl != nil && isDynamicQuorum(c.n.cfg) {
		for _, v := range c.n.ctrl.Voters() {
			out = append(out, api.ControllerEndpoint{NodeID: v.ID, Host: v.Host, Port: v.Port})
		}
	}
	return c.n.meta.view.Status().Leader, out
}

// controllerMetrics keeps the controller server's series apart from the
// broker server's on the node's registry.
func controllerMetrics(reg prometheus.Registerer) prometheus.Registerer {
	return prometheus.WrapRegistererWithPrefix("controller_", reg)
}
