package server

// ConnectionLimits are the connection quotas a running server can change:
// max.connections, max.connections.per.ip and its overrides, which Kafka
// updates dynamically (cluster-wide keys).
type ConnectionLimits struct {
	MaxConnections               int
	MaxConnectionsPerIP          int
	MaxConnectionsPerIPOverrides string
}

// SetConnectionLimits applies new connection limits live, as Kafka's
// ConnectionQuotas.updateMaxConnections and updateIpConnectionRateQuota:
// connections already open stay (a lower limit only refuses new ones), and
// acceptors waiting for a slot look again, so a raised max.connections lets
// them accept at once. Host names in the overrides are resolved now. The
// values were validated when the config was (Kafka's rules); an error leaves
// the limits as they were.
func (s *Server) SetConnectionLimits(l ConnectionLimits) error {
	fresh, err := newConnectionQuotas(Options{MaxConnections: l.MaxConnections,
		MaxConnectionsPerIP: l.MaxConnectionsPerIP, MaxConnectionsPerIPOverrides: l.MaxConnectionsPerIPOverrides})
	if err != nil {
		return err
	}
	q := s.quotas
	q.mu.Lock()
	defer q.mu.Unlock()
	q.max, q.maxPerIP, q.overrides = fresh.max, fresh.maxPerIP, fresh.overrides
	q.broadcastLocked()
	return nil
}

// connectionLimits returns the limits in force (for tests).
func (s *Server) connectionLimits() (maxConns, maxPerIP int) {
	q := s.quotas
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.max, q.maxPerIP
}
