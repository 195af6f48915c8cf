package server

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// metrics are the server's request and network metrics, registered on the
// registry the caller passes in (one registry per node, never the global).
// Kafka's RequestMetrics and socket-server-metrics keep Kafka's names
// (reqmetrics.go, socketmetrics.go); the sluice_* ones have no Kafka
// equivalent.
type metrics struct {
	requests *requestMetrics
	socket   *socketMetrics
	// errors counts requests that closed their connection (a frame too
	// large, a malformed request, a failed write), by request and reason.
	errors *prometheus.CounterVec
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

func newMetrics(reg, kafkaReg prometheus.Registerer, listeners []Listener, mem *requestMemory) (*metrics, error) {
	requests, err := registerShared(kafkaReg, newRequestMetrics())
	if err != nil {
		return nil, err
	}
	socket, err := registerShared(kafkaReg, newSocketMetrics(listeners))
	if err != nil {
		return nil, err
	}
	socket.add(listeners)
	m := &metrics{
		requests: requests,
		socket:   socket,
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_request_errors_total", Help: "Requests that closed their connection, by API and reason.",
		}, []string{"request", "reason"}),
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
	for _, c := range []prometheus.Collector{m.errors, m.acceptErrors, m.acceptorBlocked, m.rejected, m.tlsHandshakes, m.tlsFailures, m.poolDepleted,
		used, available, waiting} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering server metrics: %w", err)
		}
	}
	return m, nil
}

// registerShared registers c, or returns the collector of its type already
// registered by another server of the node: Kafka's combined node counts
// its broker's and controller's requests in one RequestMetrics.
func registerShared[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		if existing, ok := already.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, fmt.Errorf("registering server metrics: %w", err)
}

// requestName names an API key for labels; every unknown key shares one
// label so a hostile client cannot create label values at will.
func requestName(key int16) string {
	if kmsg.RequestForKey(key) == nil {
		return "unknown"
	}
	return kafkaRequestName(key)
}
