package sluicetest

import (
	"context"
	"net"
	"sync"
	"time"

	"github.com/sluice-io/sluice/internal/netfault"
)

// peerDialTimeout bounds a node's connection to a peer through the proxy.
const peerDialTimeout = 10 * time.Second

// network routes every node-to-node connection through a fault proxy: node
// a reaches node b's listener at an address of the proxy kept for the pair
// (a, b), so the proxy knows both ends of each connection. Clients reach
// the nodes directly.
type network struct {
	proxy *netfault.Proxy
	// owner maps each node listener's address to its node id; fixed.
	owner map[string]int32

	mu sync.Mutex
	// routes are the proxy addresses by (source node, target address);
	// sources by proxy address.
	routes  map[route]string
	sources map[string]int32
}

type route struct {
	from   int32
	target string
}

func (n *network) init(c *Cluster) {
	n.owner = map[string]int32{}
	for _, m := range c.nodes {
		n.owner[m.brokerAddr] = m.id
		n.owner[m.ctrlAddr] = m.id
	}
	n.routes = map[route]string{}
	n.sources = map[string]int32{}
	n.proxy = netfault.NewProxy(n.identify, c.log.With("component", "sluicetest-proxy"))
}

// identify names the node that opened a connection by the proxy address
// it dialed.
func (n *network) identify(_, listener net.Addr) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if id, ok := n.sources[listener.String()]; ok {
		return int(id)
	}
	return netfault.UnknownNode
}

// dialer is node from's peer dialer.
func (n *network) dialer(from int32) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		target, err := n.route(from, addr)
		if err != nil {
			return nil, err
		}
		d := net.Dialer{Timeout: peerDialTimeout}
		return d.DialContext(ctx, network, target)
	}
}

// route is the address from dials to reach addr: the pair's proxy
// listener for another node's listener, addr itself otherwise.
func (n *network) route(from int32, addr string) (string, error) {
	to, ok := n.owner[addr]
	if !ok || to == from {
		return addr, nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	r := route{from, addr}
	if p, ok := n.routes[r]; ok {
		return p, nil
	}
	p, err := n.proxy.Listen(int(to), addr)
	if err != nil {
		return "", err
	}
	n.routes[r] = p
	n.sources[p] = from
	return p, nil
}

func (n *network) close() {
	if n.proxy != nil {
		n.proxy.Close()
	}
}
