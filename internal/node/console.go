package node

import (
	"context"
	"errors"
	"fmt"

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
	var err error
	n.console, err = console.New(console.Options{
		Address: addr,
		Metrics: gatherer,
		Healthy: n.healthy,
		Logger:  n.logger.With("component", "console"),
	})
	if err != nil {
		return fmt.Errorf("%s: %w", config.SluiceDebugListener.Name(), err)
	}
	return nil
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
