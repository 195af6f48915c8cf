package console

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// debugKey and metricsKey name test listeners as the node's keys do.
const (
	debugKey   = "sluice.debug.listener"
	metricsKey = "sluice.metrics.listener"
)

// startConsole serves opts with one debug-like listener (metrics and pprof)
// on a free loopback port unless opts lists its own, and returns the base
// URL of the first listener.
func startConsole(t *testing.T, opts Options) string {
	t.Helper()
	s := startServer(t, opts)
	return "http://" + s.Addr(s.opts.Listeners[0].Key).String()
}

func startServer(t *testing.T, opts Options) *Server {
	t.Helper()
	if len(opts.Listeners) == 0 {
		opts.Listeners = []Listener{{Key: debugKey, Metrics: true, Pprof: true}}
	}
	for i := range opts.Listeners {
		if opts.Listeners[i].Address == "" {
			opts.Listeners[i].Address = "127.0.0.1:0"
		}
	}
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		addrs := map[string]bool{}
		for _, l := range opts.Listeners {
			addrs[s.Addr(l.Key).String()] = true
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		for a := range addrs {
			if _, err := http.Get("http://" + a + "/healthz"); err == nil {
				t.Errorf("console still serving on %s after Shutdown", a)
			}
		}
	})
	return s
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

func TestMetricsServeNodeAndRuntimeSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_test_things_total", Help: "things"})
	reg.MustRegister(c)
	c.Add(3)
	base := startConsole(t, Options{Metrics: reg})
	code, body := get(t, base+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics status %d", code)
	}
	for _, want := range []string{
		"sluice_test_things_total 3",
		"go_memstats_heap_inuse_bytes ",
		"go_memory_classes_heap_objects_bytes ",
		"go_cpu_classes_gc_total_cpu_seconds_total ",
		"go_cpu_classes_total_cpu_seconds_total ",
		"go_goroutines ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func TestHealthzFollowsTheNode(t *testing.T) {
	var failing atomic.Bool
	base := startConsole(t, Options{Healthy: func() error {
		if failing.Load() {
			return errors.New("metadata quorum failed")
		}
		return nil
	}})
	if code, body := get(t, base+"/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Fatalf("healthy node: %d %q", code, body)
	}
	failing.Store(true)
	if code, body := get(t, base+"/healthz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "metadata quorum failed") {
		t.Fatalf("failed node: %d %q", code, body)
	}
}

func TestPprofIsServed(t *testing.T) {
	base := startConsole(t, Options{})
	if code, body := get(t, base+"/debug/pprof/"); code != http.StatusOK || !strings.Contains(body, "heap") {
		t.Fatalf("pprof index: %d", code)
	}
	if code, body := get(t, base+"/debug/pprof/heap?debug=1"); code != http.StatusOK || !strings.Contains(body, "heap profile") {
		t.Fatalf("heap profile: %d %.80q", code, body)
	}
}

// TestPprofDoesNotServeTheCommandLine: the command line holds --override
// values, passwords included, so /debug/pprof/cmdline answers 404 (also
// through the index handler's profile lookup) and the index does not link it.
func TestPprofDoesNotServeTheCommandLine(t *testing.T) {
	base := startConsole(t, Options{})
	for _, path := range []string{"/debug/pprof/cmdline", "/debug/pprof/cmdline?debug=1", "/debug/pprof/cmdline/"} {
		if code, body := get(t, base+path); code != http.StatusNotFound {
			t.Errorf("%s: %d %.80q, want 404", path, code, body)
		}
	}
	code, body := get(t, base+"/debug/pprof/")
	if code != http.StatusOK || strings.Contains(body, "cmdline") {
		t.Fatalf("pprof index: %d, links cmdline: %t", code, strings.Contains(body, "cmdline"))
	}
	for _, want := range []string{"heap", "goroutine", "profile", "trace", "symbol"} {
		if !strings.Contains(body, ">"+want+"<") {
			t.Errorf("pprof index lacks %s", want)
		}
	}
	if code, body := get(t, base+"/debug/pprof/goroutine?debug=1"); code != http.StatusOK || !strings.Contains(body, "goroutine profile") {
		t.Fatalf("goroutine profile: %d %.80q", code, body)
	}
}

func TestNewNeedsAListener(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Fatal("New without a listener succeeded")
	}
}
