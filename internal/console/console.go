// Package console serves a node's operator endpoints over HTTP on its own
// debug listener (sluice.debug.listener): /metrics (the node's prometheus
// registry plus the Go runtime's collectors), /healthz and net/http/pprof
// without /debug/pprof/cmdline. Nothing here serves the command line, the
// environment or a config value: --override puts passwords on the command
// line. The web console and its JSON API will live here too.
package console

import (
	"context"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"regexp"
	runtimepprof "runtime/pprof"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Options configure a console Server.
type Options struct {
	// Address is host:port to listen on, e.g. "127.0.0.1:9644"; port 0
	// picks a free port (see Addr).
	Address string
	// Metrics is the node's registry. The console adds the Go runtime and
	// process collectors in a registry of its own, so the node's stays as
	// the node built it. Nil serves only the runtime's metrics.
	Metrics prometheus.Gatherer
	// Healthy reports whether the node serves clients; nil means always.
	Healthy func() error
	// Users, when set, are required (HTTP basic authentication) on every
	// endpoint but /healthz.
	Users  BasicAuthUsers
	Logger *slog.Logger
}

// runtimeMetrics are the runtime/metrics series exported next to the
// classic go_memstats ones: CPU classes (GC CPU share), memory classes (heap
// in use by objects) and GC counters, which a heap/GC budget is judged by.
var runtimeMetrics = collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/(cpu|gc|memory|sched)/.*`)}

// Server is the debug HTTP server. Start binds it; Shutdown stops it.
type Server struct {
	opts    Options
	log     *slog.Logger
	handler http.Handler

	mu      sync.Mutex
	ln      net.Listener
	httpSrv *http.Server
	// served is closed when the serving goroutine returns.
	served chan struct{}
}

// New builds the handlers; it binds nothing.
func New(opts Options) (*Server, error) {
	if opts.Address == "" {
		return nil, errors.New("console: no listen address")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Healthy == nil {
		opts.Healthy = func() error { return nil }
	}
	runtimeReg := prometheus.NewRegistry()
	if err := runtimeReg.Register(collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(runtimeMetrics))); err != nil {
		return nil, fmt.Errorf("console: go collector: %w", err)
	}
	if err := runtimeReg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, fmt.Errorf("console: process collector: %w", err)
	}
	gatherers := prometheus.Gatherers{runtimeReg}
	if opts.Metrics != nil {
		gatherers = append(gatherers, opts.Metrics)
	}
	s := &Server{opts: opts, log: opts.Logger}
	s.handler = s.routes(gatherers)
	if len(opts.Users) > 0 {
		s.handler = requireBasicAuth(opts.Users, s.handler)
	}
	return s, nil
}

func (s *Server) routes(metrics prometheus.Gatherer) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(metrics, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError,
	}))
	mux.HandleFunc("GET /healthz", s.healthz)
	// pprof's handlers are registered on this mux only; nothing serves
	// http.DefaultServeMux, where importing net/http/pprof put them all.
	// pprof.Cmdline is left out: the command line holds what --override
	// set, passwords included. The index is ours so it does not link it.
	mux.HandleFunc("/debug/pprof/{$}", pprofIndex)
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", http.NotFound)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// pprofIndex lists the runtime's profiles and the CPU profile, symbol and
// trace endpoints, as pprof.Index does, without the command line.
func pprofIndex(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	var names []string
	for _, p := range runtimepprof.Profiles() {
		names = append(names, p.Name())
	}
	names = append(names, "profile", "symbol", "trace")
	slices.Sort(names)
	fmt.Fprint(w, "<html><head><title>/debug/pprof/</title></head><body>\n<p>Profiles (add ?debug=1 for text):</p>\n<ul>\n")
	for _, n := range names {
		n = html.EscapeString(n)
		fmt.Fprintf(w, "<li><a href=\"%s?debug=1\">%s</a></li>\n", n, n)
	}
	fmt.Fprint(w, "</ul>\n</body></html>\n")
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if err := s.opts.Healthy(); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "unhealthy: %v\n", err)
		return
	}
	fmt.Fprintln(w, "ok")
}

// Handler returns the console's routes (tests, embedding).
func (s *Server) Handler() http.Handler { return s.handler }

// Start binds the listener and serves in a goroutine that Shutdown stops.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", s.opts.Address)
	if err != nil {
		return fmt.Errorf("console listener on %s: %w", s.opts.Address, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln != nil {
		ln.Close()
		return errors.New("console: already started")
	}
	s.ln = ln
	s.httpSrv = &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	s.served = make(chan struct{})
	go func() {
		defer close(s.served)
		if err := s.httpSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("console stopped serving", "err", err)
		}
	}()
	s.log.Info("console listening", "address", ln.Addr().String())
	return nil
}

// Addr is the bound address, or nil before Start.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Shutdown stops accepting and waits for requests in flight until ctx ends
// (a CPU profile or trace may run for its requested seconds), then closes
// what is left. It does nothing before Start.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	srv, served := s.httpSrv, s.served
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	err := srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(fmt.Errorf("console shutdown: %w", err), srv.Close())
	}
	<-served
	return err
}
