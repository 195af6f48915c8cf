package server

import (
	"fmt"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// metrics are the server's request and network metrics, registered on the
// registry the caller passes in (one registry per node, never the global).
type metrics struct {
	requests          *prometheus.CounterVec
	errors            *prometheus.CounterVec
	bytesIn           *prometheus.CounterVec
	bytesOut          *prometheus.CounterVec
	latency           *prometheus.HistogramVec
	connections       *prometheus.GaugeVec
	connectionsOpened *prometheus.CounterVec
}

// Error reasons, the "reason" label of sluice_request_errors_total.
const (
	reasonFrameTooLarge      = "frame_too_large"
	reasonMalformed          = "malformed"
	reasonUnknownKey         = "unknown_key"
	reasonUnsupportedVersion = "unsupported_version"
	reasonHandler            = "handler"
	reasonWrite              = "write"
)

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_requests_total", Help: "Requests served, by API and version.",
		}, []string{"request", "version"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_request_errors_total", Help: "Requests that closed their connection, by API and reason.",
		}, []string{"request", "reason"}),
		bytesIn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_network_bytes_in_total", Help: "Request bytes received, frame size prefixes included.",
		}, []string{"listener"}),
		bytesOut: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_network_bytes_out_total", Help: "Response bytes sent, frame size prefixes included.",
		}, []string{"listener"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sluice_request_duration_seconds",
			Help:    "Time from a request's arrival to its response being written.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
		}, []string{"request"}),
		connections: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "sluice_connections", Help: "Open client connections.",
		}, []string{"listener"}),
		connectionsOpened: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_connections_opened_total", Help: "Client connections accepted.",
		}, []string{"listener"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.errors, m.bytesIn, m.bytesOut, m.latency, m.connections, m.connectionsOpened} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering server metrics: %w", err)
		}
	}
	return m, nil
}

// requestName names an API key for labels; every unknown key shares one
// label so a hostile client cannot create label values at will.
func requestName(key int16) string {
	if kmsg.RequestForKey(key) == nil {
		return "unknown"
	}
	return kmsg.NameForKey(key)
}

func versionLabel(v int16) string { return strconv.Itoa(int(v)) }
