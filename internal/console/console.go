// Package console serves a node's operator endpoints over HTTP. Each
// listener key (sluice.debug.listener, sluice.metrics.listener, and the web
// console's sluice.console.listener) names an address and the handler sets
// it wants: /metrics (the node's prometheus registry plus the Go runtime's
// collectors), /healthz and /readyz (always, never behind credentials, for
// Kubernetes probes), net/http/pprof without /debug/pprof/cmdline, and a UI
// handler at "/". Keys naming the same address share one HTTP server.
// Nothing here serves the command line, the environment or a config value:
// --override puts passwords on the command line.
package console

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Listener is what one listener key asks for.
type Listener struct {
	// Key names the listener in messages (the configuration key).
	Key string
	// Address is host:port to listen on; port 0 picks a free port (see
	// Addr). Listeners with the same Address share a server.
	Address string
	// Metrics serves /metrics; Pprof serves /debug/pprof/.
	Metrics, Pprof bool
	// UI, when set, is mounted at "/" (the web console); it does its own
	// authentication.
	UI http.Handler
	// Users, when set, are required (HTTP basic authentication) on this
	// key's /metrics and /debug/pprof/; /healthz and /readyz stay open.
	Users BasicAuthUsers
}

// Options configure a console Server.
type Options struct {
	Listeners []Listener
	// Metrics is the node's registry. The console adds the Go runtime and
	// process collectors in a registry of its own, so the node's stays as
	// the node built it. Nil serves only the runtime's metrics.
	Metrics prometheus.Gatherer
	// Healthy reports whether the node is alive (/healthz); nil means
	// always.
	Healthy func() error
	// Ready lists the node's unmet readiness conditions (/readyz), one
	// line each; none means ready. Nil means always ready.
	Ready  func() []string
	Logger *slog.Logger
}

// Server is the node's HTTP servers, one per distinct address. Start binds
// them; Shutdown stops them.
type Server struct {
	opts     Options
	log      *slog.Logger
	sites    []*site
	draining atomic.Bool
}

// site is one address and the handler its listener keys mount.
type site struct {
	address string
	keys    []string
	handler http.Handler

	mu      sync.Mutex
	ln      net.Listener
	httpSrv *http.Server
	// served is closed when the serving goroutine returns.
	served chan struct{}
}

// New builds the handlers; it binds nothing. Two keys on one address that
// both serve a handler set must agree on its users.
func New(opts Options) (*Server, error) {
	if len(opts.Listeners) == 0 {
		return nil, errors.New("console: no listener")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Healthy == nil {
		opts.Healthy = func() error { return nil }
	}
	if opts.Ready == nil {
		opts.Ready = func() []string { return nil }
	}
	metrics, err := gatherers(opts.Metrics)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, log: opts.Logger}
	for _, group := range byAddress(opts.Listeners) {
		h, err := s.routes(group, metrics)
		if err != nil {
			return nil, err
		}
		st := &site{address: group[0].Address, handler: h}
		for _, l := range group {
			st.keys = append(st.keys, l.Key)
		}
		s.sites = append(s.sites, st)
	}
	return s, nil
}

// byAddress groups the listeners by address, in the order of first mention.
func byAddress(ls []Listener) [][]Listener {
	var groups [][]Listener
	for _, l := range ls {
		i := slices.IndexFunc(groups, func(g []Listener) bool { return g[0].Address == l.Address })
		if i < 0 {
			groups = append(groups, []Listener{l})
			continue
		}
		groups[i] = append(groups[i], l)
	}
	return groups
}

// Handler returns the routes served on address (tests, embedding), or nil.
func (s *Server) Handler(address string) http.Handler {
	for _, st := range s.sites {
		if st.address == address {
			return st.handler
		}
	}
	return nil
}

// Drain makes /healthz answer 503 "shutting down": the node is stopping.
func (s *Server) Drain() { s.draining.Store(true) }

// Start binds every address and serves each in a goroutine that Shutdown
// stops. On an error nothing stays bound.
func (s *Server) Start() error {
	for i, st := range s.sites {
		if err := st.start(s.log); err != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			for _, started := range s.sites[:i] {
				_ = started.shutdown(ctx)
			}
			return err
		}
	}
	return nil
}

func (st *site) start(log *slog.Logger) error {
	ln, err := net.Listen("tcp", st.address)
	if err != nil {
		return fmt.Errorf("%v on %s: %w", st.keys, st.address, err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ln != nil {
		ln.Close()
		return errors.New("console: already started")
	}
	st.ln = ln
	st.httpSrv = &http.Server{
		Handler:           st.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	st.served = make(chan struct{})
	go func() {
		defer close(st.served)
		if err := st.httpSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("console stopped serving", "address", st.address, "err", err)
		}
	}()
	log.Info("console listening", "address", ln.Addr().String(), "keys", st.keys)
	return nil
}

// Addr is the bound address of the listener key, or nil before Start or
// for a key not served.
func (s *Server) Addr(key string) net.Addr {
	for _, st := range s.sites {
		if slices.Contains(st.keys, key) {
			st.mu.Lock()
			defer st.mu.Unlock()
			if st.ln == nil {
				return nil
			}
			return st.ln.Addr()
		}
	}
	return nil
}

// Shutdown stops accepting and waits for requests in flight until ctx ends
// (a CPU profile or trace may run for its requested seconds), then closes
// what is left. It does nothing before Start.
func (s *Server) Shutdown(ctx context.Context) error {
	s.Drain()
	var errs []error
	for _, st := range s.sites {
		errs = append(errs, st.shutdown(ctx))
	}
	return errors.Join(errs...)
}

func (st *site) shutdown(ctx context.Context) error {
	st.mu.Lock()
	srv, served := st.httpSrv, st.served
	st.mu.Unlock()
	if srv == nil {
		return nil
	}
	err := srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(fmt.Errorf("console shutdown on %s: %w", st.address, err), srv.Close())
	}
	<-served
	return err
}
