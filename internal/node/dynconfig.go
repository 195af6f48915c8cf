package node

// Dynamic broker configuration: AlterConfigs and IncrementalAlterConfigs on a
// BROKER resource (one broker, or "" for the cluster-wide default) are
// stored by the controller in the metadata log as ConfigRecords. Every
// broker replays them into its image; dynConfig, the broker publisher's
// subscriber, re-resolves the node's effective configuration
// (config.WithDynamic: static file, then the cluster default, then this
// broker's own values) whenever one of those two resources changes, and
// tells the components that registered for it.
//
// To make a component follow a dynamic key:
//  1. add the key to config.liveBrokerKeys (internal/config/live.go), so
//     the controller accepts it instead of refusing it with INVALID_REQUEST;
//  2. register an applier while the node is built, before the publisher
//     starts (buildBroker and what it calls):
//
//	n.broker.dynconf.register("replica-fetchers", []config.Key{config.NumReplicaFetchers},
//		func(ch brokerConfigChange) {
//			fetchers.Resize(int(ch.cfg.Int(config.NumReplicaFetchers)))
//		})
//
// The keys an applier names are data: it runs only when one of them may
// have changed, and TestLiveBrokerKeysAreApplied holds every live key to a
// registered applier (or to the topic settings).
//
// (n.broker.dynconf is built in buildBroker right after the topic config
// publisher: register from code that runs after that line, or from
// newBrokerConfigs below.)
//
// An applier runs on the metadata publisher's goroutine, in registration
// order, once at the first delivery (with every key marked changed, so the
// static file and the stored dynamic values both reach it at start-up)
// and then after every change of the two resources. It must not block for
// long: metadata waits for it. It reads the new values from ch.cfg, which
// stays valid after it returns; brokerConfigs.current is the same config
// for readers outside an applier.

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-io/sluice/internal/commitlog/cleaner"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/server"
)

// brokerConfigChange is what an applier is told.
type brokerConfigChange struct {
	// cfg is the node's effective configuration now.
	cfg *config.Config
	// changed holds the keys whose dynamic value (per broker or cluster
	// default) was set, changed or removed; nil means every key (the first
	// delivery).
	changed map[string]bool
}

// touches reports whether any of keys may have a new effective value.
func (ch brokerConfigChange) touches(keys ...config.Key) bool {
	if ch.changed == nil {
		return true
	}
	for _, k := range keys {
		if ch.changed[k.Name()] {
			return true
		}
	}
	return false
}

type brokerConfigApplier struct {
	name  string
	keys  []config.Key
	apply func(brokerConfigChange)
}

// brokerConfigs follows the dynamic broker config records of the image.
type brokerConfigs struct {
	static *config.Config
	self   metadata.ConfigResource
	log    *slog.Logger
	// current is the effective configuration last delivered.
	current atomic.Pointer[config.Config]

	mu sync.Mutex
	// Invariant: perBroker and clusterDefault are the layers current was
	// resolved from, and every applier has seen them; delivered is false
	// until the first delivery.
	perBroker, clusterDefault map[string]string
	delivered                 bool
	appliers                  []brokerConfigApplier
}

func newBrokerConfigs(static *config.Config, logger *slog.Logger) *brokerConfigs {
	d := &brokerConfigs{static: static, log: logger,
		self: metadata.ConfigResource{Type: metadata.ConfigResourceBroker, Name: strconv.Itoa(int(static.NodeID()))}}
	d.current.Store(static)
	return d
}

// register adds an applier of keys; see the package comment above.
func (d *brokerConfigs) register(name string, keys []config.Key, apply func(brokerConfigChange)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.appliers = append(d.appliers, brokerConfigApplier{name: name, keys: keys, apply: apply})
}

// followed lists the keys the registered appliers apply.
func (d *brokerConfigs) followed() map[string]bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[string]bool{}
	for _, a := range d.appliers {
		for _, k := range a.keys {
			out[k.Name()] = true
		}
	}
	return out
}

// publish is the metadata subscriber (delta nil: the whole image).
func (d *brokerConfigs) publish(delta *metadata.Delta, image *metadata.Image) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.delivered && delta != nil && delta.Base().Offset() >= 0 && !d.touched(delta) {
		return
	}
	clusterRes := metadata.ConfigResource{Type: metadata.ConfigResourceBroker, Name: ""}
	perBroker, clusterDefault := image.Configs(d.self), image.Configs(clusterRes)
	var changed map[string]bool
	if d.delivered {
		changed = diffKeys(d.perBroker, perBroker)
		maps.Copy(changed, diffKeys(d.clusterDefault, clusterDefault))
		if len(changed) == 0 {
			return
		}
	}
	cfg, err := d.static.WithDynamic(perBroker, clusterDefault)
	if err != nil {
		// The controller accepted these values; a build that refuses
		// them keeps what it applied last.
		d.log.Error("dynamic broker configs refused; keeping the configuration in force", "err", err)
		return
	}
	d.perBroker, d.clusterDefault, d.delivered = perBroker, clusterDefault, true
	d.current.Store(cfg)
	ch := brokerConfigChange{cfg: cfg, changed: changed}
	if changed != nil {
		d.log.Info("dynamic broker configuration changed", "keys", slices.Sorted(maps.Keys(changed)))
	}
	for _, a := range d.appliers {
		if ch.touches(a.keys...) {
			a.apply(ch)
		}
	}
}

func (d *brokerConfigs) touched(delta *metadata.Delta) bool {
	for _, res := range delta.ChangedConfigs() {
		if res.Type == metadata.ConfigResourceBroker && (res.Name == "" || res == d.self) {
			return true
		}
	}
	return false
}

// diffKeys are the keys set in one of a and b but not to the same value.
func diffKeys(a, b map[string]string) map[string]bool {
	out := map[string]bool{}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			out[k] = true
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out[k] = true
		}
	}
	return out
}

// newBrokerConfigs builds the node's dynamic configuration and registers
// the appliers of the keys this file applies live: the log cleaner's and
// the connection limits. Topic settings (log.retention.ms,
// message.max.bytes...) follow through broker.TopicConfigPublisher, which
// resolves the same layers for every topic.
func (n *Node) newBrokerConfigs() *brokerConfigs {
	d := newBrokerConfigs(n.cfg, n.logger.With("component", "dynamic-config"))
	d.register("log-cleaner", []config.Key{config.LogCleanerThreads, config.LogCleanerDedupeBufferSize,
		config.LogCleanerIOBufferLoadFactor, config.LogCleanerIOBufferSize, config.LogCleanerBackoffMs,
		config.LogCleanerIOMaxBytesPerSecond}, n.applyCleanerConfig)
	d.register("connection-limits", []config.Key{config.MaxConnections, config.MaxConnectionsPerIP,
		config.MaxConnectionsPerIPOverrides}, n.applyConnectionLimits)
	return d
}

// liveCleanerOptions are cleanerOptions plus the I/O rate, which only the
// throttle reads.
func liveCleanerOptions(cfg *config.Config) cleaner.Options {
	o := cleanerOptions(cfg)
	o.IOMaxBytesPerSecond = cfg.Double(config.LogCleanerIOMaxBytesPerSecond)
	return o
}

// applyCleanerConfig reconfigures the cleaner when one of its keys changed
// (Kafka's LogCleaner.reconfigure: the threads are restarted).
func (n *Node) applyCleanerConfig(ch brokerConfigChange) {
	if n.storage == nil || n.storage.cleaner == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := n.storage.cleaner.Reconfigure(ctx, liveCleanerOptions(ch.cfg)); err != nil {
		n.logger.Error("log cleaner not reconfigured", "err", err)
	}
}

// applyConnectionLimits gives the broker's and the controller's servers the
// new connection limits.
func (n *Node) applyConnectionLimits(ch brokerConfigChange) {
	limits := server.ConnectionLimits{
		MaxConnections:               int(ch.cfg.Int(config.MaxConnections)),
		MaxConnectionsPerIP:          int(ch.cfg.Int(config.MaxConnectionsPerIP)),
		MaxConnectionsPerIPOverrides: ch.cfg.String(config.MaxConnectionsPerIPOverrides),
	}
	for _, s := range []*server.Server{n.brokerServer(), n.ctrlServer} {
		if s == nil {
			continue
		}
		if err := s.SetConnectionLimits(limits); err != nil {
			n.logger.Error("connection limits not changed", "err", err)
		}
	}
}

func (n *Node) brokerServer() *server.Server {
	if n.broker == nil {
		return nil
	}
	return n.broker.server
}
