package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/console"
)

// consoleKey is one HTTP listener key, its users key and what it serves.
type consoleKey struct {
	addr, users    config.SluiceKey
	metrics, pprof bool
}

// consoleKeys are the HTTP listener keys of this file: the debug listener
// (everything, pprof included) and the metrics listener (no pprof).
var consoleKeys = []consoleKey{
	{addr: config.SluiceDebugListener, users: config.SluiceDebugListenerUsers, metrics: true, pprof: true},
	{addr: config.SluiceMetricsListener, users: config.SluiceMetricsListenerUsers, metrics: true},
}

// newConsole builds the HTTP servers of the listener keys that are set;
// keys naming one address share a server.
func (n *Node) newConsole() error {
	var listeners []console.Listener
	for _, k := range consoleKeys {
		addr, ok := n.cfg.Raw(k.addr)
		if !ok || addr == "" {
			continue
		}
		users, err := n.listenerUsers(k.addr, k.users, addr)
		if err != nil {
			return err
		}
		listeners = append(listeners, console.Listener{Key: k.addr.Name(), Address: addr, Metrics: k.metrics, Pprof: k.pprof, Users: users})
	}
	// The web console (sluice.console.listener) appends its listener here.
	if err := n.appendWebConsole(&listeners); err != nil {
		return err
	}
	if len(listeners) == 0 {
		return nil
	}
	gatherer, ok := n.metrics.(prometheus.Gatherer)
	if !ok {
		n.logger.Warn("the node's metrics registry cannot be gathered; /metrics serves only the Go runtime's")
	}
	var err error
	n.console, err = console.New(console.Options{
		Listeners: listeners,
		Metrics:   gatherer,
		Healthy:   n.healthy,
		Ready:     n.readiness,
		Logger:    n.logger.With("component", "console"),
	})
	if err != nil {
		return fmt.Errorf("HTTP listeners: %w", err)
	}
	return nil
}

// consoleUsers reads the debug listener's users (see listenerUsers).
func (n *Node) consoleUsers(addr string) (console.BasicAuthUsers, error) {
	return n.listenerUsers(config.SluiceDebugListener, config.SluiceDebugListenerUsers, addr)
}

// listenerUsers reads an HTTP listener's users. With security on (a
// listener that is not PLAINTEXT) an HTTP listener anyone on the network
// can reach must have them: metrics and profiles would otherwise be open
// where the Kafka listeners are not.
func (n *Node) listenerUsers(listenerKey, usersKey config.SluiceKey, addr string) (console.BasicAuthUsers, error) {
	key := usersKey.Name()
	if v, ok := n.cfg.Raw(usersKey); ok && strings.TrimSpace(v) != "" {
		users, err := console.ParseBasicAuthUsers(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		return users, nil
	}
	if isLoopback(addr) {
		return nil, nil
	}
	what := strings.TrimSuffix(strings.TrimPrefix(listenerKey.Name(), "sluice."), ".listener")
	for _, l := range n.cfg.Listeners() {
		if l.Protocol != "" && l.Protocol != "PLAINTEXT" {
			return nil, fmt.Errorf("%s=%s: listener %s is %s, so a %s listener off loopback needs credentials: set %s (name:bcrypt-hash,...)",
				listenerKey.Name(), addr, l.Name, l.Protocol, what, key)
		}
	}
	return nil, nil
}

// isLoopback reports whether host:port binds a loopback address only.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// healthy is /healthz: the node is alive unless its metadata quorum failed
// (it then stops); the console adds "shutting down" once the node stops.
func (n *Node) healthy() error {
	select {
	case <-n.meta.view.Done():
		if err := n.meta.view.Err(); err != nil {
			return fmt.Errorf("metadata quorum: %w", err)
		}
		return errors.New("metadata quorum stopped")
	default:
		return nil
	}
}

// DebugAddr is the bound address of the debug listener, or "" when none.
func (n *Node) DebugAddr() string { return n.httpAddr(config.SluiceDebugListener) }

// MetricsAddr is the bound address of the metrics listener, or "" when
// none.
func (n *Node) MetricsAddr() string { return n.httpAddr(config.SluiceMetricsListener) }

func (n *Node) httpAddr(key config.SluiceKey) string {
	if n.console == nil {
		return ""
	}
	if a := n.console.Addr(key.Name()); a != nil {
		return a.String()
	}
	return ""
}

// startConsole binds the HTTP listeners, if configured, at the start of Run
// so start-up itself can be profiled and probed; the probes fail from the
// moment ctx ends (the node stops).
func (n *Node) startConsole(ctx context.Context) error {
	if n.console == nil {
		return nil
	}
	context.AfterFunc(ctx, n.console.Drain)
	return n.console.Start()
}

// stopConsole stops the HTTP listeners last, so the stop can be observed.
func (n *Node) stopConsole() error {
	if n.console == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	return n.console.Shutdown(ctx)
}
