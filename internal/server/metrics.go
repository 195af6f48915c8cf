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
	// acceptErrors counts failed accepts the acceptor retried after a
	// pause (Kafka's acceptor logs them and keeps running).
	acceptErrors *prometheus.CounterVec
	// acceptorBlocked is the time an acceptor waited for a connection slot
	// at max.connections (Kafka's AcceptorBlockedPercent, as a total).
	acceptorBlocked *prometheus.CounterVec
	// rejected counts connections closed by a connection quota.
	rejected *prometheus.CounterVec
	// tlsHandshakes counts completed TLS handshakes on TLS listeners;
	// tlsFailures the connections closed because theirs failed.
	tlsHandshakes *prometheus.CounterVec
	tlsFailures   *prometheus.CounterVec
	// poolDepleted is the time connections' reads were paused waiting for
	// request memory (Kafka's MemoryPoolDepletedTimeTotal).
	poolDepleted prometheus.Counter
	// sasl counts authentications on SASL listeners.
	sasl *saslMetrics
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

// Quota reasons, the "reason" label of sluice_connections_rejected_total.
const (
	// rejectPerIP: a new connection from an address already at
	// max.connections.per.ip (or its override), closed at once.
	rejectPerIP = "max_connections_per_ip"
	// rejectMaxConnections: the least recently active connection of
	// another listener, closed when an inter-broker connection took the
	// broker past max.connections.
	rejectMaxConnections = "max_connections"
)

func newMetrics(reg prometheus.Registerer, mem *requestMemory) (*metrics, error) {
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
		acceptErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_acceptor_errors_total",
			Help: "Accepts that failed (out of file descriptors, buffers or memory) and were retried after a pause, by listener and error.",
		}, []string{"listener", "error"}),
		acceptorBlocked: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_acceptor_blocked_seconds_total",
			Help: "Time the acceptor waited for a connection slot at max.connections, by listener.",
		}, []string{"listener"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_connections_rejected_total",
			Help: "Connections closed by a connection quota (max.connections.per.ip, max.connections), by listener and reason.",
		}, []string{"listener", "reason"}),
		tlsHandshakes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_tls_handshakes_total", Help: "TLS handshakes completed on TLS listeners, by listener.",
		}, []string{"listener"}),
		tlsFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_tls_handshake_failures_total",
			Help: "Connections on TLS listeners closed because their handshake failed (not TLS, timeout, closed, certificate, principal, protocol), by listener and reason.",
		}, []string{"listener", "reason"}),
		poolDepleted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sluice_memory_pool_depleted_seconds_total",
			Help: "Time connections' reads were paused because request buffers in flight had reached queued.max.request.bytes.",
		}),
	}
	used := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sluice_memory_pool_used_bytes", Help: "Bytes of request buffers in flight (read or being served).",
	}, func() float64 { return float64(mem.inUse()) })
	available := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sluice_memory_pool_available_bytes",
		Help: "Bytes of request buffers that may still be allocated before reads pause (+Inf when unbounded; negative while one request overdraws).",
	}, mem.available)
	waiting := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sluice_memory_pool_waiting_connections", Help: "Connections whose reads are paused waiting for request memory.",
	}, func() float64 { return float64(mem.waiting()) })
	sasl, err := newSASLMetrics(reg)
	if err != nil {
		return nil, err
	}
	m.sasl = sasl
	for _, c := range []prometheus.Collector{m.requests, m.errors, m.bytesIn, m.bytesOut, m.latency, m.connections,
		m.connectionsOpened, m.acceptErrors, m.acceptorBlocked, m.rejected, m.tlsHandshakes, m.tlsFailures, m.poolDepleted,
		used, available, waiting} {
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
