package node

import (
	"fmt"
	"net"
	"os"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/quorum"
	"github.com/sluice-io/sluice/internal/server"
)

// newBrokerServer builds the broker listeners (every listener but the
// controller's) over the broker's request handlers.
func (n *Node) newBrokerServer() error {
	registry, err := n.brokerRegistry()
	if err != nil {
		return fmt.Errorf("request handlers: %w", err)
	}
	budget, err := server.RequestMemoryBudget(n.cfg.Raw(config.SluiceQueuedMaxRequestBytes))
	if err != nil {
		return err
	}
	n.broker.server, err = server.New(server.Options{
		Listeners:                    n.brokerListeners(),
		Registry:                     registry,
		MaxRequestSize:               n.cfg.Int(config.SocketRequestMaxBytes),
		MaxConnections:               int(n.cfg.Int(config.MaxConnections)),
		InterBrokerListener:          n.cfg.InterBrokerListenerName(),
		MaxConnectionsPerIP:          int(n.cfg.Int(config.MaxConnectionsPerIP)),
		MaxConnectionsPerIPOverrides: n.cfg.String(config.MaxConnectionsPerIPOverrides),
		QueuedMaxRequestBytes:        n.cfg.Long(config.QueuedMaxRequestBytes),
		RequestMemoryBudget:          budget,
		IdleTimeout:                  millis(n.cfg.Long(config.ConnectionsMaxIdleMs)),
		Logger:                       n.logger.With("component", "server"),
		Metrics:                      n.metrics,
		Clock:                        n.clk,
	})
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	return nil
}

// newControllerServer serves a voter's CONTROLLER listeners: the
// controller's request handlers (DescribeQuorum, the admin requests), with,
// among several voters, raft connections diverted to the raft transport. A
// single voter binds them too, as Kafka's combined mode does, so
// --bootstrap-controller reaches it.
func (n *Node) newControllerServer() error {
	registry, err := n.controllerRegistry()
	if err != nil {
		return fmt.Errorf("controller request handlers: %w", err)
	}
	var divert *server.Divert
	if n.meta.raft != nil {
		divert = &server.Divert{PrefixLen: 8, Match: quorum.IsRPCPrefix, Serve: n.meta.raft.ServeConn}
	}
	var listeners []server.Listener
	for _, l := range n.cfg.Listeners() {
		if isControllerListener(n.cfg, l.Name) {
			sl := n.serverListener(l)
			sl.Registry, sl.Divert = registry, divert
			listeners = append(listeners, sl)
		}
	}
	if len(listeners) == 0 {
		return fmt.Errorf("no listener named in controller.listener.names %v: a controller needs one", n.cfg.ControllerListenerNames())
	}
	budget, err := server.RequestMemoryBudget(n.cfg.Raw(config.SluiceQueuedMaxRequestBytes))
	if err != nil {
		return err
	}
	// Kafka's controller has its own SocketServer: the same limits, counted
	// apart from the broker's.
	n.ctrlServer, err = server.New(server.Options{
		Listeners:                    listeners,
		Registry:                     registry,
		MaxRequestSize:               n.cfg.Int(config.SocketRequestMaxBytes),
		MaxConnections:               int(n.cfg.Int(config.MaxConnections)),
		MaxConnectionsPerIP:          int(n.cfg.Int(config.MaxConnectionsPerIP)),
		MaxConnectionsPerIPOverrides: n.cfg.String(config.MaxConnectionsPerIPOverrides),
		QueuedMaxRequestBytes:        n.cfg.Long(config.QueuedMaxRequestBytes),
		RequestMemoryBudget:          budget,
		IdleTimeout:                  millis(n.cfg.Long(config.ConnectionsMaxIdleMs)),
		Logger:                       n.logger.With("component", "controller-server"),
		// The controller server's series stay apart from the broker's.
		Metrics: controllerMetrics(n.metrics),
		Clock:   n.clk,
		// Kafka's RequestMetrics are shared with the broker's, as in Kafka.
		KafkaMetrics: n.metrics,
	})
	if err != nil {
		return fmt.Errorf("controller server: %w", err)
	}
	return nil
}

// brokerListeners are the listeners clients use: every listener but the
// controller's, which the controller server binds.
func (n *Node) brokerListeners() []server.Listener {
	var out []server.Listener
	for _, l := range n.cfg.Listeners() {
		if isControllerListener(n.cfg, l.Name) {
			continue
		}
		out = append(out, n.serverListener(l))
	}
	return out
}

func isControllerListener(cfg *config.Config, name string) bool {
	for _, c := range cfg.ControllerListenerNames() {
		if c == name {
			return true
		}
	}
	return false
}

// advertisesEphemeralPort reports whether a broker listener is advertised
// with port 0, whose real port the registration must take from the bound
// listener.
func advertisesEphemeralPort(cfg *config.Config) bool {
	for _, l := range cfg.AdvertisedListeners() {
		if l.Port == 0 && !isControllerListener(cfg, l.Name) {
			return true
		}
	}
	return false
}

// boundPort is the port a listener is bound to, or 0.
func boundPort(s *server.Server, listener string) int {
	if addr, ok := s.Addr(listener).(*net.TCPAddr); ok {
		return addr.Port
	}
	return 0
}

// hostName is the host a listener without one is advertised with.
func hostName() string {
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "localhost"
}
