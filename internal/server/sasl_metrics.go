package server

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// saslMetrics are Kafka's authentication metrics (successful-authentication-total,
// failed-authentication-total, successful-reauthentication-total,
// failed-reauthentication-total, expired-connections-killed-count) by
// listener and mechanism.
type saslMetrics struct {
	authenticated   *prometheus.CounterVec
	failed          *prometheus.CounterVec
	reauthenticated *prometheus.CounterVec
	reauthFailed    *prometheus.CounterVec
	expired         *prometheus.CounterVec
}

func newSASLMetrics(reg prometheus.Registerer) (*saslMetrics, error) {
	m := &saslMetrics{
		authenticated: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_successful_authentication_total",
			Help: "SASL authentications completed, by listener and mechanism.",
		}, []string{"listener", "mechanism"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_failed_authentication_total",
			Help: "SASL authentications that failed and closed their connection, by listener, mechanism (none before one was chosen) and reason.",
		}, []string{"listener", "mechanism", "reason"}),
		reauthenticated: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_successful_reauthentication_total",
			Help: "SASL re-authentications completed (KIP-368), by listener and mechanism.",
		}, []string{"listener", "mechanism"}),
		reauthFailed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_failed_reauthentication_total",
			Help: "SASL re-authentications that failed and closed their connection, by listener, mechanism and reason.",
		}, []string{"listener", "mechanism", "reason"}),
		expired: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_expired_connections_killed_total",
			Help: "Connections closed because their SASL session had expired (connections.max.reauth.ms or the credential's lifetime), by listener.",
		}, []string{"listener"}),
	}
	for _, c := range []prometheus.Collector{m.authenticated, m.failed, m.reauthenticated, m.reauthFailed, m.expired} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering SASL metrics: %w", err)
		}
	}
	return m, nil
}
