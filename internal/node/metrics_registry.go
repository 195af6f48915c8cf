package node

import (
	"reflect"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// listingRegistry is the node's Registerer over the caller's registry: it
// registers there (whose Gather tests and embedders read as before) and
// keeps the collectors in order, so the console writes /metrics from them
// one series at a time (console.CollectorLister) instead of gathering all
// of a node's series, 60,000 with 10,000 partitions, as messages first.
type listingRegistry struct {
	inner    prometheus.Registerer
	gatherer prometheus.Gatherer
	mu       sync.Mutex
	cs       []prometheus.Collector
}

// listCollectors wraps reg when it can be gathered and holds no series
// yet; another is kept as it is, so a caller's own collectors registered
// before are still served (gathered, as before).
func listCollectors(reg prometheus.Registerer) prometheus.Registerer {
	g, ok := reg.(prometheus.Gatherer)
	if !ok {
		return reg
	}
	if families, err := g.Gather(); err != nil || len(families) > 0 {
		return reg
	}
	return &listingRegistry{inner: reg, gatherer: g}
}

func (r *listingRegistry) Register(c prometheus.Collector) error {
	if err := r.inner.Register(c); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cs = append(r.cs, c)
	return nil
}

func (r *listingRegistry) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

func (r *listingRegistry) Unregister(c prometheus.Collector) bool {
	if !r.inner.Unregister(c) {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// == on a collector whose type is not comparable would panic.
	comparable := reflect.TypeOf(c).Comparable()
	r.cs = slices.DeleteFunc(r.cs, func(x prometheus.Collector) bool {
		return comparable && reflect.TypeOf(x) == reflect.TypeOf(c) && x == c
	})
	return true
}

func (r *listingRegistry) Gather() ([]*dto.MetricFamily, error) { return r.gatherer.Gather() }

// Collectors returns the registered collectors in registration order.
func (r *listingRegistry) Collectors() []prometheus.Collector {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.cs)
}
