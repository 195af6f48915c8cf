// Package transport holds a node's clients to its peers: one franz-go
// client per peer address, shared by everything that talks node to node
// (follower fetches to partition leaders, requests forwarded to the active
// controller, an observer's metadata fetches). kgo keeps separate
// connections per request kind inside one client, so a follower's long-poll
// Fetch never holds up a forwarded CreateTopics to the same peer.
package transport

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/version"
)

// ErrClosed is returned by a closed pool.
var ErrClosed = errors.New("transport: pool closed")

// Pool is one client per peer address, created on first use. It is safe
// for concurrent use; Close releases every connection.
type Pool struct {
	clientID string
	opts     []kgo.Opt
	peerOpts func(addr string) []kgo.Opt

	mu      sync.Mutex
	clients map[string]*kgo.Client
	closed  bool
}

// NewPool returns an empty pool whose clients announce clientID; opts are
// added to every client's.
func NewPool(clientID string, opts ...kgo.Opt) *Pool {
	return New(Options{ClientID: clientID, Opts: opts})
}

// Options configure a Pool.
type Options struct {
	// ClientID is what every client announces.
	ClientID string
	// Opts are added to every client's options.
	Opts []kgo.Opt
	// PeerOpts, when set, gives the options of the client for one peer
	// address: the security of the listener the address belongs to (the
	// inter-broker listener's for a broker, the controller listener's for
	// a controller), e.g. a TLS dialer with the node's keystore.
	PeerOpts func(addr string) []kgo.Opt
}

// New returns an empty pool.
func New(o Options) *Pool {
	return &Pool{clientID: o.ClientID, opts: o.Opts, peerOpts: o.PeerOpts, clients: map[string]*kgo.Client{}}
}

// Request sends req to the peer at addr, negotiating its version, and
// leaves req's version as the caller set it (kgo overwrites it), so a
// request can be sent again to another peer.
func (p *Pool) Request(ctx context.Context, addr string, req kmsg.Request) (kmsg.Response, error) {
	cl, err := p.client(addr)
	if err != nil {
		return nil, err
	}
	version := req.GetVersion()
	defer req.SetVersion(version)
	return cl.SeedBrokers()[0].Request(ctx, req)
}

func (p *Pool) client(addr string) (*kgo.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	if cl, ok := p.clients[addr]; ok {
		return cl, nil
	}
	// Peers see Sluice's name and version in ApiVersions (a semantic
	// version always matches Kafka's client software version pattern).
	opts := append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ClientID(p.clientID),
		kgo.SoftwareNameAndVersion("sluice", version.Version())}, p.opts...)
	if p.peerOpts != nil {
		opts = append(opts, p.peerOpts(addr)...)
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("transport: client for %s: %w", addr, err)
	}
	p.clients[addr] = cl
	return cl, nil
}

// Close closes every client; later requests fail with ErrClosed.
func (p *Pool) Close() {
	p.mu.Lock()
	clients := p.clients
	p.clients, p.closed = map[string]*kgo.Client{}, true
	p.mu.Unlock()
	for _, cl := range clients {
		cl.Close()
	}
}
