package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"sluice/internal/config"
	"sluice/internal/console"
)

// newConsole builds the debug HTTP server when sluice.debug.listener is set.
func (n *Node) newConsole() error {
	addr, ok := n.cfg.Raw(config.SluiceDebugListener)
	if !ok || addr == "" {
		return nil
	}
	gatherer, ok := n.metrics.(prometheus.Gatherer)
	if !ok {
		n.logger.Warn("the node's metrics registry cannot be gathered; /metrics serves only the Go runtime's", "key", config.SluiceDebugListener.Name())
	}
	users, err := n.consoleUsers(addr)
	if err != nil {
		return err
	}
	n.console, err = console.New(console.Options{
		Address: addr,
		Metrics: gatherer,
		Healthy: n.healthy,
		Users:   users,
		Logger:  n.logger.With("component", "console"),
	})
	if err != nil {
		return fmt.Errorf("%s: %w", config.SluiceDebugListener.Name(), err)
	}
	return nil
}

// consoleUsers reads the debug listener's users. With security on (a
// listener that is not PLAINTEXT) a debug listener anyone on the network
// can reach must have them: metrics and profiles would otherwise be open
// where the Kafka listeners are not.
func (n *Node) consoleUsers(addr string) (console.BasicAuthUsers, error) {
	key := config.SluiceDebugListenerUsers.Name()
	if v, ok := n.cfg.Raw(config.SluiceDebugListenerUsers); ok && strings.TrimSpace(v) != "" {
		users, err := console.ParseBasicAuthUsers(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		return users, nil
	}
	if isLoopback(addr) {
		return nil, nil
	}
	for _, l := range n.cfg.Listeners() {
		if l.Protocol != "" && l.Protocol != "PLAINTEXT" {
			return nil, fmt.Errorf("%s=%s: listener %s is %s, so a debug listener off loopback needs credentials: set %s (name:bcrypt-hash,...)",
				config.SluiceDebugListener.Name(), addr, l.Name, l.Protocol, key)
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

// healthy is /healthz: the node serves clients and its metadata quorum runs.
func (n *Node) healthy() error {
	select {
	case <-n.ready:
	default:
		return errors.New("starting")
	}
	if err := n.meta.view.Err(); err != nil {
		return fmt.Errorf("metadata quorum: %w", err)
	}
	return nil
}

// DebugAddr is the bound address of the debug listener, or "" when none.
func (n *Node) DebugAddr() string {
	if n.console == nil || n.console.Addr() == nil {
		return ""
	}
	return n.console.Addr().String()
}

// startConsole binds the debug listener, if configured, at the start of Run
// so start-up itself can be profiled.
func (n *Node) startConsole() error {
	if n.console == nil {
		return nil
	}
	return n.console.Start()
}

// stopConsole stops the debug listener last, so the stop can be observed.
func (n *Node) stopConsole() error {
	if n.console == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	return n.console.Shutdown(ctx)
}
