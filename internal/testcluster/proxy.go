package testcluster

import (
	"log/slog"
	"net"

	"github.com/sluice-io/sluice/internal/netfault"
)

// The fault proxy lives in internal/netfault (`sluice verify` uses it and
// must not import this package); these names keep existing callers.

// CutMode is how a cut node's connections fail (see netfault.CutMode).
type CutMode = netfault.CutMode

// Proxy forwards and cuts inter-node connections (see netfault.Proxy).
type Proxy = netfault.Proxy

const (
	// Refuse closes a cut node's connections at once.
	Refuse = netfault.Refuse
	// Blackhole stalls them until Heal.
	Blackhole = netfault.Blackhole
	// UnknownNode is a connection the proxy could not attribute.
	UnknownNode = netfault.UnknownNode
)

// NewProxy returns a proxy that attributes each accepted connection to a
// node with identify (see netfault.NewProxy).
func NewProxy(identify func(client, listener net.Addr) int, log *slog.Logger) *Proxy {
	return netfault.NewProxy(identify, log)
}
