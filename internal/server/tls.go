package server

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"github.com/sluice-io/sluice/internal/auth"
)

// TLS handshake failure reasons, the "reason" label of
// sluice_tls_handshake_failures_total.
const (
	// tlsNotTLS: the first bytes were not a TLS record (a plaintext Kafka
	// request, an HTTP probe, garbage).
	tlsNotTLS = "not_tls"
	// tlsTimeout: no complete handshake within the handshake timeout.
	tlsTimeout = "timeout"
	// tlsClosed: the client left during the handshake.
	tlsClosed = "closed"
	// tlsCertificate: a client certificate missing where required,
	// untrusted or expired.
	tlsCertificate = "certificate"
	// tlsPrincipal: no ssl.principal.mapping.rules rule named the client.
	tlsPrincipal = "principal"
	// tlsProtocol: any other handshake failure (no common version or
	// cipher suite, a malformed message).
	tlsProtocol = "protocol"
)

// securityProtocol is what a listener's connections report.
func securityProtocol(l Listener) string {
	switch {
	case l.SecurityProtocol != "":
		return l.SecurityProtocol
	case l.TLS != nil:
		return auth.SSL
	}
	return auth.Plaintext
}

// handshake runs the TLS handshake of a connection just accepted on a TLS
// listener on a goroutine of its own (the acceptor goes on accepting),
// bounded by the handshake timeout and cut short by Shutdown; then the
// connection is served (or diverted) as the principal its certificate
// names. A failed handshake closes the connection and is counted.
func (s *Server) handshake(l Listener, nc net.Conn, ip netip.Addr) {
	s.connections.Add(1)
	go func() {
		defer s.connections.Done()
		tc := tls.Server(nc, l.TLS.Config)
		nc.SetDeadline(time.Now().Add(s.opts.HandshakeTimeout))
		principal, err := s.completeHandshake(l, tc)
		if err != nil {
			nc.Close()
			s.quotas.release(ip)
			return
		}
		nc.SetDeadline(time.Time{})
		s.metrics.tlsHandshakes.WithLabelValues(l.Name).Inc()
		if l.Divert != nil && l.SASL == nil {
			s.peekConn(l, tc, ip, principal)
			return
		}
		s.startConn(l, tc, ip, principal)
		if l.Name == s.quotas.protected {
			s.evictExcess()
		}
	}()
}

// completeHandshake handshakes and names the principal, counting and
// logging a failure.
func (s *Server) completeHandshake(l Listener, tc *tls.Conn) (auth.Principal, error) {
	fail := func(reason string, err error) (auth.Principal, error) {
		s.metrics.tlsFailures.WithLabelValues(l.Name, reason).Inc()
		s.log.Info("TLS handshake failed; connection closed", "listener", l.Name,
			"remote", tc.NetConn().RemoteAddr().String(), "reason", reason, "err", err)
		return auth.Principal{}, err
	}
	ctx, cancel := context.WithTimeout(s.draining, s.opts.HandshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		return fail(handshakeFailure(err), err)
	}
	if l.TLS.Principal == nil {
		return auth.Anonymous, nil
	}
	p, err := l.TLS.Principal(tc.ConnectionState())
	if err != nil {
		return fail(tlsPrincipal, err)
	}
	return p, nil
}

// handshakeFailure labels a handshake error with a bounded set of values.
func handshakeFailure(err error) string {
	var header tls.RecordHeaderError
	var verify *tls.CertificateVerificationError
	var ne net.Error
	switch {
	case errors.As(err, &header):
		return tlsNotTLS
	case errors.As(err, &verify), strings.Contains(err.Error(), "didn't provide a certificate"):
		return tlsCertificate
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled),
		errors.As(err, &ne) && ne.Timeout():
		return tlsTimeout
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNRESET):
		return tlsClosed
	}
	return tlsProtocol
}
