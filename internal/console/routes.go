package console

import (
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// runtimeMetrics are the runtime/metrics series exported next to the
// classic go_memstats ones: CPU classes (GC CPU share), memory classes (heap
// in use by objects) and GC counters, which a heap/GC budget is judged by.
var runtimeMetrics = collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/(cpu|gc|memory|sched)/.*`)}

// gatherers is the runtime's registry followed by the node's.
func gatherers(node prometheus.Gatherer) (prometheus.Gatherer, error) {
	runtimeReg := prometheus.NewRegistry()
	if err := runtimeReg.Register(collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(runtimeMetrics))); err != nil {
		return nil, fmt.Errorf("console: go collector: %w", err)
	}
	if err := runtimeReg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, fmt.Errorf("console: process collector: %w", err)
	}
	gs := prometheus.Gatherers{runtimeReg}
	if node != nil {
		gs = append(gs, node)
	}
	return gs, nil
}

// routes mounts the handler sets of the listeners sharing one address.
func (s *Server) routes(group []Listener, metrics prometheus.Gatherer) (http.Handler, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	var metricsBy, pprofBy, uiBy *Listener
	for i := range group {
		l := &group[i]
		var err error
		if l.Metrics {
			if metricsBy, err = claim(metricsBy, l, "/metrics"); err != nil {
				return nil, err
			}
		}
		if l.Pprof {
			if pprofBy, err = claim(pprofBy, l, "/debug/pprof/"); err != nil {
				return nil, err
			}
		}
		if l.UI != nil {
			if uiBy != nil {
				return nil, fmt.Errorf("%s and %s both mount a UI on %s", uiBy.Key, l.Key, l.Address)
			}
			uiBy = l
		}
	}
	if metricsBy != nil {
		mux.Handle("GET /metrics", guard(metricsBy.Users, s.metricsHandler(metrics)))
	}
	if pprofBy != nil {
		mountPprof(mux, pprofBy.Users)
	}
	if uiBy != nil {
		mux.Handle("/", uiBy.UI)
	}
	return mux, nil
}

// claim records that l serves path; a second key serving it on the same
// address must have the same users, or one of them would be bypassed.
func claim(prev, l *Listener, path string) (*Listener, error) {
	if prev == nil {
		return l, nil
	}
	if !maps.EqualFunc(prev.Users, l.Users, slices.Equal) {
		return nil, fmt.Errorf("%s and %s share %s and both serve %s, with different basic auth users: give them the same users or different addresses",
			prev.Key, l.Key, l.Address, path)
	}
	return prev, nil
}

// guard requires users' credentials when there are any.
func guard(users BasicAuthUsers, h http.Handler) http.Handler {
	if len(users) == 0 {
		return h
	}
	return requireBasicAuth(users, h)
}
