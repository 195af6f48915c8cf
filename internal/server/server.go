// Package server accepts Kafka client connections on the configured
// listeners and serves their requests through an api.Registry: per
// connection one reader and one writer goroutine, one request in flight at a
// time (Kafka mutes a channel until its response is sent), and a graceful
// shutdown that lets in-flight requests finish. Its bounds are Kafka's
// SocketServer's: an acceptor that outlives accept errors, the connection
// quotas, a cap on request bytes in flight, and connections that make no
// progress for connections.max.idle.ms closed.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-io/sluice/internal/api"
	"github.com/sluice-io/sluice/internal/auth"
	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/protocol"
)

// Listener is one configured listener, e.g. {Name: "PLAINTEXT", Address: "127.0.0.1:9092"}:
// plaintext TCP, or TLS when TLS is set.
type Listener struct {
	Name    string
	Address string
	// SecurityProtocol is the listener's protocol as connections report it
	// (api.ConnState); empty means PLAINTEXT, or SSL when TLS is set.
	SecurityProtocol string
	// TLS serves the listener over TLS (an SSL listener): each accepted
	// connection's handshake runs on its own goroutine under
	// Options.HandshakeTimeout before any Kafka byte is read, and one that
	// fails (a plaintext or garbage first packet, an untrusted, expired or
	// missing client certificate) is closed and counted.
	TLS *TLS
	// Registry serves this listener's requests instead of Options.Registry
	// (a CONTROLLER listener serves the controller's API set).
	Registry *api.Registry
	// Divert, when set, hands connections of another protocol sharing this
	// port (the raft RPC on the CONTROLLER listener) to their own server.
	// On a SASL listener a connection is diverted only once authenticated.
	Divert *Divert
	// SASL authenticates the connections of a SASL_PLAINTEXT or SASL_SSL
	// listener (SaslHandshake, SaslAuthenticate) before any other request
	// but ApiVersions is served.
	SASL *SASL
}

// Divert recognises connections of another protocol by their first bytes.
type Divert struct {
	// PrefixLen bytes are read from each new connection and passed to Match.
	PrefixLen int
	Match     func(prefix []byte) bool
	// Serve takes over a matching connection (it must close it) with the
	// bytes already read; it runs on its own goroutine and its owner must
	// end it when it stops (the raft transport closes its connections).
	Serve func(nc net.Conn, peeked []byte)
}

// TLS is a listener's TLS.
type TLS struct {
	// Config is the server side; its GetConfigForClient may hand each
	// handshake the current keystore (tlsconf rotates certificates so).
	Config *tls.Config
	// Principal names the client of a completed handshake (the mapped
	// certificate subject, or auth.Anonymous); an error fails the
	// connection, as Kafka fails its authentication.
	Principal func(tls.ConnectionState) (auth.Principal, error)
}

// divertPeekTimeout bounds the wait for a new connection's first bytes.
const divertPeekTimeout = 10 * time.Second

// DefaultHandshakeTimeout bounds a TLS handshake, so a client that
// connects and sends nothing (or a byte a minute) cannot pin a goroutine.
const DefaultHandshakeTimeout = 10 * time.Second

// Options configure a Server.
type Options struct {
	Listeners []Listener
	// Registry routes requests to handlers.
	Registry *api.Registry
	// MaxRequestSize is socket.request.max.bytes; a larger frame closes the
	// connection. Zero means Kafka's default, 100 MiB.
	MaxRequestSize int32
	// MaxConnections is max.connections across all listeners; at the limit
	// the acceptor waits for a slot, as Kafka's does. Zero means unlimited
	// (Kafka's zero admits only the inter-broker listener).
	MaxConnections int
	// InterBrokerListener is inter.broker.listener.name. When the server
	// has other listeners too, its connections are admitted past
	// MaxConnections, and the least recently active connection of another
	// listener is closed instead, as Kafka protects replication.
	InterBrokerListener string
	// MaxConnectionsPerIP is max.connections.per.ip: a connection from an
	// address that has this many already is closed as soon as it is
	// accepted. Zero means only the overrides may connect, or with no
	// overrides (which Kafka refuses) no limit.
	MaxConnectionsPerIP int
	// MaxConnectionsPerIPOverrides is max.connections.per.ip.overrides,
	// "host:count,...": host names are resolved when New runs.
	MaxConnectionsPerIPOverrides string
	// QueuedMaxRequestBytes is queued.max.request.bytes: the cap on bytes
	// of request buffers in flight on the server's connections (read, or
	// being served), beyond which reads pause. Zero or negative (Kafka's
	// default, -1) means RequestMemoryBudget applies.
	QueuedMaxRequestBytes int64
	// RequestMemoryBudget is sluice.queued.max.request.bytes, the cap when
	// QueuedMaxRequestBytes is unset; zero or negative means unbounded.
	RequestMemoryBudget int64
	// IdleTimeout is connections.max.idle.ms: a connection with no request
	// for this long is closed, and so is one whose response makes no
	// progress for this long (a client that does not read). Zero means
	// Kafka's default, 10 minutes.
	IdleTimeout time.Duration
	// HandshakeTimeout bounds the TLS handshake of a connection on a TLS
	// listener; zero means DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// Clock times the acceptor's pauses after accept errors; nil means the
	// real clock. Network deadlines stay on real time.
	Clock clock.Clock
	// Logger receives one line per connection closed for a protocol error.
	Logger *slog.Logger
	// Metrics is the node's registry; nil means a private one.
	Metrics prometheus.Registerer
	// KafkaMetrics, when set, is where the Kafka-named request and
	// socket-server series register instead of Metrics, unprefixed: a
	// node's servers given the same one share them, as a combined Kafka
	// node's broker and controller share RequestMetrics (socket-server
	// series are per listener either way).
	KafkaMetrics prometheus.Registerer
}

// Server serves Kafka connections. Start binds the listeners; Shutdown stops.
type Server struct {
	opts    Options
	log     *slog.Logger
	clock   clock.Clock
	metrics *metrics
	quotas  *connectionQuotas
	// mem is the budget and pool of request buffers.
	mem *requestMemory
	// listen binds a listener: net.Listen, or a test's failing listener.
	listen func(network, address string) (net.Listener, error)

	mu        sync.Mutex
	listeners map[string]net.Listener
	conns     map[*conn]struct{}
	stopping  bool
	serving   bool

	acceptors   sync.WaitGroup
	connections sync.WaitGroup
	// stopped is closed when Shutdown begins, so acceptors stop waiting for
	// slots or pausing after errors.
	stopped chan struct{}
	// draining is the parent of every connection's handler context and is
	// cancelled when Shutdown begins: a request parked on a long wait (a
	// fetch's max.wait.ms, acks=all) returns what it has at once and its
	// answer is written, as Kafka answers parked requests when it stops,
	// instead of holding the drain for the wait's full length.
	draining    context.Context
	stopDrained context.CancelFunc
}

// New validates the options and registers the metrics; it binds nothing.
func New(opts Options) (*Server, error) {
	if opts.Registry == nil {
		return nil, errors.New("server: no api registry")
	}
	if len(opts.Listeners) == 0 {
		return nil, errors.New("server: no listeners")
	}
	if opts.MaxRequestSize == 0 {
		opts.MaxRequestSize = protocol.DefaultMaxRequestSize
	}
	if opts.MaxRequestSize < 0 {
		return nil, fmt.Errorf("server: socket.request.max.bytes %d must be positive", opts.MaxRequestSize)
	}
	if opts.QueuedMaxRequestBytes > 0 && opts.QueuedMaxRequestBytes < int64(opts.MaxRequestSize) {
		return nil, fmt.Errorf("server: queued.max.request.bytes %d must be larger or equal to socket.request.max.bytes %d",
			opts.QueuedMaxRequestBytes, opts.MaxRequestSize)
	}
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = 10 * time.Minute
	}
	if opts.HandshakeTimeout <= 0 {
		opts.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Metrics == nil {
		opts.Metrics = prometheus.NewRegistry()
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	quotas, err := newConnectionQuotas(opts)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	limit := opts.QueuedMaxRequestBytes
	if limit <= 0 {
		limit = opts.RequestMemoryBudget
	}
	mem := newRequestMemory(limit)
	if opts.KafkaMetrics == nil {
		opts.KafkaMetrics = opts.Metrics
	}
	m, err := newMetrics(opts.Metrics, opts.KafkaMetrics, opts.Listeners, mem)
	if err != nil {
		return nil, err
	}
	mem.waited = m.poolDepleted
	draining, stopDrained := context.WithCancel(context.Background())
	return &Server{
		opts:        opts,
		log:         opts.Logger,
		clock:       opts.Clock,
		metrics:     m,
		quotas:      quotas,
		mem:         mem,
		listen:      net.Listen,
		listeners:   make(map[string]net.Listener),
		conns:       make(map[*conn]struct{}),
		stopped:     make(chan struct{}),
		draining:    draining,
		stopDrained: stopDrained,
	}, nil
}

// Start binds every listener and starts accepting. On error nothing is left
// bound.
func (s *Server) Start() error {
	if err := s.Bind(); err != nil {
		return err
	}
	s.Serve()
	return nil
}

// Bind binds every listener without accepting yet, so their addresses are
// known (an ephemeral port is advertised as bound) while clients wait in
// the kernel's backlog, as Kafka binds its ports before it enables request
// processing. On error nothing is left bound.
func (s *Server) Bind() error {
	var bound []net.Listener
	for _, l := range s.opts.Listeners {
		ln, err := s.listen("tcp", l.Address)
		if err != nil {
			for _, b := range bound {
				b.Close()
			}
			return fmt.Errorf("listener %s on %s: %w", l.Name, l.Address, err)
		}
		bound = append(bound, ln)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, l := range s.opts.Listeners {
		s.listeners[l.Name] = bound[i]
	}
	return nil
}

// Serve starts accepting on the listeners Bind bound; it does nothing once
// Shutdown has begun, and serves each listener once.
func (s *Server) Serve() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping || s.serving {
		return
	}
	s.serving = true
	for _, l := range s.opts.Listeners {
		ln, ok := s.listeners[l.Name]
		if !ok {
			continue
		}
		s.acceptors.Add(1)
		go s.accept(l, ln)
		s.log.Info("listening", "listener", l.Name, "address", ln.Addr().String())
	}
}

// Addr returns the bound address of a listener, or nil.
func (s *Server) Addr(listener string) net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ln, ok := s.listeners[listener]; ok {
		return ln.Addr()
	}
	return nil
}

// Run starts the server, serves until ctx is done, then shuts down, giving
// in-flight requests up to grace to finish.
func (s *Server) Run(ctx context.Context, grace time.Duration) error {
	if err := s.Start(); err != nil {
		return err
	}
	<-ctx.Done()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	return s.Shutdown(shutdownCtx)
}

func (s *Server) isStopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopping
}

// startConn serves an admitted connection as principal; its slot and
// per-address count are released when it ends.
func (s *Server) startConn(l Listener, nc net.Conn, ip netip.Addr, principal auth.Principal) {
	registry := l.Registry
	if registry == nil {
		registry = s.opts.Registry
	}
	c := newConn(s, l, registry, nc, ip, principal)
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		nc.Close()
		s.quotas.release(ip)
		return
	}
	s.conns[c] = struct{}{}
	s.connections.Add(1)
	s.mu.Unlock()
	c.sock.connections.Add(1)
	c.sock.created.Add(1)
	go func() {
		defer s.connections.Done()
		c.serve()
		s.mu.Lock()
		delete(s.conns, c)
		evicted := c.evicted
		s.mu.Unlock()
		c.sock.connections.Add(-1)
		if evicted {
			s.quotas.releaseEvicted(ip)
		} else {
			s.quotas.release(ip)
		}
	}()
}

// Shutdown stops accepting, lets each connection finish the request it is
// serving (no new request is read), and closes it. Handlers' contexts are
// cancelled at once, so a request parked in a long wait answers with what it
// has rather than waiting out its timeout. When ctx ends first the remaining
// connections are closed at once and ctx's error is returned.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		return errors.New("server: already shut down")
	}
	s.stopping = true
	close(s.stopped)
	for _, ln := range s.listeners {
		ln.Close()
	}
	for c := range s.conns {
		c.drain()
	}
	s.mu.Unlock()
	s.stopDrained()
	s.acceptors.Wait()

	done := make(chan struct{})
	go func() {
		s.connections.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		for c := range s.conns {
			c.forceClose()
		}
		s.mu.Unlock()
		<-done
		return fmt.Errorf("server: shutdown deadline passed with requests in flight: %w", ctx.Err())
	}
}
