package node

import (
	"context"
	"net"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/auth"
	"github.com/sluice-io/sluice/internal/auth/tlsconf"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/server"
)

// peerDialTimeout bounds a connection to a peer, its TLS handshake included.
const peerDialTimeout = 10 * time.Second

// newTLS reads the TLS of every SSL listener the node serves (each needs a
// keystore) and of a controller listener it only reaches (a broker-only
// node's), from the listener's ssl.* keys with its listener.name.
// prefix; a half-configured one stops start-up naming the key.
func (n *Node) newTLS() (map[string]*tlsconf.Store, error) {
	stores := map[string]*tlsconf.Store{}
	add := func(name string, serve bool) error {
		if p := n.cfg.ListenerProtocol(name); p != auth.SSL && p != auth.SASLSSL {
			return nil
		}
		if _, done := stores[name]; done {
			return nil
		}
		st, err := tlsconf.New(tlsconf.Options{
			Listener: name,
			Lookup:   func(key string) (string, string, bool) { return n.cfg.ListenerValue(name, key) },
			Serve:    serve,
			Clock:    n.clk,
			Logger:   n.logger.With("component", "tls"),
		})
		if err != nil {
			return err
		}
		stores[name] = st
		return nil
	}
	for _, l := range n.cfg.Listeners() {
		if err := add(l.Name, true); err != nil {
			return nil, err
		}
	}
	for _, name := range n.cfg.ControllerListenerNames() {
		if err := add(name, false); err != nil {
			return nil, err
		}
	}
	return stores, nil
}

// serverListener is a configured listener as the server serves it: over
// TLS when it is SSL or SASL_SSL, authenticated with SASL when it is
// SASL_PLAINTEXT or SASL_SSL.
func (n *Node) serverListener(l config.Listener) server.Listener {
	sl := server.Listener{Name: l.Name, Address: l.Addr(), SecurityProtocol: l.Protocol, SASL: n.sasl[l.Name]}
	if st := n.tls[l.Name]; st != nil {
		sl.TLS = &server.TLS{Config: st.ServerConfig(), Principal: st.Principal}
	}
	return sl
}

// peerOptions are the client options for a peer address: a controller
// (a voter's or a bootstrap server's address) is reached with the
// controller listener's security, any other peer (a partition leader, a
// transaction marker's destination) with the inter-broker listener's, as
// Kafka's broker does.
func (n *Node) peerOptions(addr string) []kgo.Opt {
	listener := n.cfg.InterBrokerListenerName()
	if n.isControllerAddr(addr) {
		listener = n.cfg.ControllerListenerNames()[0]
	}
	var opts []kgo.Opt
	if d := n.peerDial(listener); d != nil {
		opts = append(opts, kgo.Dialer(d))
	}
	if m := n.peerSASL[listener]; m != nil {
		opts = append(opts, kgo.SASL(m))
	}
	return opts
}

func (n *Node) isControllerAddr(addr string) bool {
	for _, a := range voterAddrs(n.cfg) {
		if a == addr {
			return true
		}
	}
	return slices.Contains(n.cfg.QuorumBootstrapServers(), addr)
}

// raftDial dials the voters' CONTROLLER listener for the raft transport:
// with its TLS, and authenticated with the controller mechanism when the
// listener is SASL (the server hands raft only authenticated connections).
func (n *Node) raftDial(listener string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	dial := n.peerDial(listener)
	m := n.peerSASL[listener]
	if m == nil {
		return dial
	}
	if dial == nil {
		dial = (&net.Dialer{Timeout: peerDialTimeout}).DialContext
	}
	return saslDial(dial, m)
}

// peerDial dials a peer's listener with its TLS, or nil for plain TCP.
func (n *Node) peerDial(listener string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	st := n.tls[listener]
	if st == nil {
		return n.dial // nil unless an embedding routes peers (WithPeerDial)
	}
	return st.Dial(&net.Dialer{Timeout: peerDialTimeout})
}
