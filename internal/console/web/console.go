// Package web is Sluice's web console: server-rendered pages (html/template,
// no JavaScript) over the node's own Kafka listener. The console is a Kafka
// client of its node (franz-go's kgo and kadm): what a page shows is what a
// client with the same principal may see, so ACLs apply to it as to any
// other client. A metrics-history sampler reads the node's prometheus
// registry every 10 s into a bounded ring for the charts.
//
// The framework (this file, session.go, render.go, routes.go, history.go,
// svg.go) is what every page plugs into: a page is a pageFunc registered in
// routes.go, rendered with c.render into the layout; a write is an
// actionFunc (POST, CSRF-checked, refused in read-only mode).
package web

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/clock"
)

// Options are what the node knows that the console needs.
type Options struct {
	// Bootstrap is host:port of a listener of this node the console
	// connects to (a loopback-reachable one).
	Bootstrap string
	// BootstrapFunc, when Bootstrap is empty, answers it on each new
	// client: a node binds its listeners (port 0 included) after it
	// builds the console.
	BootstrapFunc func() (string, error)
	// TLS, when set, is used to dial Bootstrap (a TLS-only listener).
	TLS *tls.Config
	// DialAddr, when set, maps each broker address the console's clients
	// dial (the seed and the metadata's) to the address to connect to.
	DialAddr func(addr string) string
	// SASLMechanisms, when not empty, are the mechanisms the listener
	// enables (SCRAM-SHA-512, SCRAM-SHA-256, PLAIN), in order of
	// preference: the console then requires a login, and each session's
	// client authenticates as its user.
	SASLMechanisms []string
	// ReadOnly refuses every write action (sluice.console.read.only).
	ReadOnly bool
	// LoopbackHosts, set when the console listens on loopback only,
	// refuses requests whose Host is not a loopback name or address: a
	// page of another site whose name was re-pointed to 127.0.0.1 (DNS
	// rebinding) would otherwise read the console as same-origin.
	LoopbackHosts bool
	// Metrics is the node's registry, sampled for the charts; nil draws none.
	Metrics prometheus.Gatherer
	// SessionTTL is how long an idle session lives; 0 means 1 h.
	SessionTTL time.Duration
	// MaxSessions bounds the sessions held in memory; 0 means 1000.
	MaxSessions int
	// ClientID is the Kafka client id of the console's clients.
	ClientID string
	// Version is what the overview says the node runs.
	Version string
	Clock   clock.Clock
	Logger  *slog.Logger
}

// Console serves the web console. New builds it, Start runs its sampler,
// Close stops the sampler and closes every Kafka client.
type Console struct {
	opts     Options
	log      *slog.Logger
	clock    clock.Clock
	pages    *pages
	sessions *sessions
	history  *history
	// topicRates are the per-topic counters' last two readings.
	topicRates topicRates
	handler    http.Handler
	mu         sync.Mutex
	// shared is the one client of a console without login, made on first
	// use; nil with SASL.
	shared  *kgo.Client
	started bool
	// closed refuses new clients once Close ran: the node stops its
	// metadata view (and so the console) before its HTTP listeners.
	closed bool
	stop   chan struct{}
	done   chan struct{}
}

// New builds the console; it connects to nothing until a page asks.
func New(opts Options) (*Console, error) {
	if opts.Bootstrap != "" {
		addr := opts.Bootstrap
		opts.BootstrapFunc = func() (string, error) { return addr, nil }
	}
	if opts.BootstrapFunc == nil {
		return nil, errors.New("web console: no bootstrap address")
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = time.Hour
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = 1000
	}
	if opts.ClientID == "" {
		opts.ClientID = "sluice-console"
	}
	for _, m := range opts.SASLMechanisms {
		if _, err := saslMechanism(m, "", ""); err != nil {
			return nil, fmt.Errorf("web console: %w", err)
		}
	}
	p, err := parsePages()
	if err != nil {
		return nil, fmt.Errorf("web console: templates: %w", err)
	}
	c := &Console{opts: opts, log: opts.Logger, clock: opts.Clock, pages: p}
	c.sessions = newSessions(opts.Clock, opts.SessionTTL, opts.MaxSessions)
	c.history = newHistory(historySize)
	c.handler = c.routes()
	return c, nil
}

// Handler serves every console route; mount it at "/".
func (c *Console) Handler() http.Handler { return c.handler }

// ReadOnly reports whether write actions are refused.
func (c *Console) ReadOnly() bool { return c.opts.ReadOnly }

// loginRequired reports whether sessions must log in (SASL listeners).
func (c *Console) loginRequired() bool { return len(c.opts.SASLMechanisms) > 0 }

// newClient builds a client of the node, authenticating with opts when set.
func (c *Console) newClient(opts ...kgo.Opt) (*kgo.Client, error) {
	addr, err := c.opts.BootstrapFunc()
	if err != nil {
		return nil, fmt.Errorf("web console: %w", err)
	}
	base := []kgo.Opt{
		kgo.SeedBrokers(addr),
		kgo.ClientID(c.opts.ClientID),
		kgo.RequestTimeoutOverhead(5 * time.Second),
		kgo.RetryTimeout(10 * time.Second),
		// kgo caches metadata for MetadataMinAge (5 s by default); a
		// console shows a topic created or deleted a moment ago.
		kgo.MetadataMinAge(250 * time.Millisecond),
	}
	switch {
	case c.opts.DialAddr != nil:
		base = append(base, kgo.Dialer(c.dial)) // it dials TLS too: kgo takes one or the other
	case c.opts.TLS != nil:
		base = append(base, kgo.DialTLSConfig(c.opts.TLS.Clone()))
	}
	cl, err := kgo.NewClient(append(base, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("web console: kafka client: %w", err)
	}
	return cl, nil
}

// sharedClient is the client every session of a console without login
// uses, made on first use.
func (c *Console) sharedClient() (*kgo.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errStopped
	}
	if c.shared == nil {
		cl, err := c.newClient()
		if err != nil {
			return nil, err
		}
		c.shared = cl
	}
	return c.shared, nil
}

// Start runs the metrics-history sampler until Close.
func (c *Console) Start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return errors.New("web console: already started")
	}
	c.started = true
	c.stop, c.done = make(chan struct{}), make(chan struct{})
	go c.sample(c.stop, c.done)
	return nil
}

// Close stops the sampler and closes the shared and every session's client.
func (c *Console) Close() error {
	c.mu.Lock()
	if c.started {
		close(c.stop)
		<-c.done
		c.started = false
	}
	shared := c.shared
	c.shared, c.closed = nil, true
	c.mu.Unlock()
	c.sessions.closeAll()
	if shared != nil {
		shared.Close()
	}
	return nil
}

// errStopped answers requests that arrive while the node stops.
var errStopped = userError(http.StatusServiceUnavailable, "The node is stopping; the console no longer reaches it.")

// isClosed reports whether Close ran.
func (c *Console) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// admin wraps a session's client; kadm.Client holds no state of its own.
func admin(cl *kgo.Client) *kadm.Client { return kadm.NewClient(cl) }
