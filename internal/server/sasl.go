package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/api"
	"github.com/sluice-io/sluice/internal/auth"
	"github.com/sluice-io/sluice/internal/auth/sasl"
	"github.com/sluice-io/sluice/internal/protocol"
)

// SASL is a SASL_PLAINTEXT or SASL_SSL listener's authentication, as
// Kafka's SaslServerAuthenticator is configured for it.
type SASL struct {
	// Mechanisms are sasl.enabled.mechanisms, in the order SaslHandshake
	// lists them.
	Mechanisms []sasl.Mechanism
	// Config authenticates each mechanism (PLAIN users, SCRAM credentials,
	// OAUTHBEARER tokens).
	Config sasl.Config
	// MaxReauth is connections.max.reauth.ms by mechanism; 0 or absent
	// means sessions last until the credential expires (if it does).
	MaxReauth map[sasl.Mechanism]time.Duration
	// FailedDelay is connection.failed.authentication.delay.ms: a failed
	// authentication's answer (and the close) wait this long, so a client
	// cannot try passwords at the speed of the network.
	FailedDelay time.Duration
	// MaxReceiveSize is sasl.server.max.receive.size: the largest frame
	// read before authentication completes (and during re-authentication);
	// a larger one closes the connection. Zero means Kafka's 524288.
	MaxReceiveSize int32
}

// DefaultSASLMaxReceiveSize is sasl.server.max.receive.size's default.
const DefaultSASLMaxReceiveSize = 524288

// saslStep is where a connection's exchange stands.
type saslStep int

const (
	// saslHandshakeOrVersions: nothing received yet; ApiVersions or
	// SaslHandshake may come.
	saslHandshakeOrVersions saslStep = iota
	// saslHandshakeNext: ApiVersions answered; SaslHandshake must come.
	saslHandshakeNext
	// saslAuthenticateNext: the mechanism is chosen; SaslAuthenticate
	// requests carry its messages until it completes.
	saslAuthenticateNext
	// saslBadMechanism: a re-authentication named another mechanism than
	// the session's; its first SaslAuthenticate fails, as Kafka's
	// REAUTH_BAD_MECHANISM.
	saslBadMechanism
	// saslComplete: authenticated; every request is served.
	saslComplete
)

// Failure reasons, the "reason" label of the failed authentication
// counters.
const (
	saslReasonCredentials     = "credentials"
	saslReasonMechanism       = "unsupported_mechanism"
	saslReasonIllegalState    = "illegal_state"
	saslReasonFrameTooLarge   = "frame_too_large"
	saslReasonTruncated       = "truncated"
	saslReasonMalformed       = "malformed"
	saslReasonPrincipalChange = "principal_changed"
	saslReasonMechanismChange = "mechanism_changed"
)

// saslNoMechanism labels failures before a mechanism was chosen (and
// unsupported ones, so a client cannot create label values at will).
const saslNoMechanism = "none"

// saslConn is one connection's exchange (api.SASLExchange). It runs on the
// connection's reader goroutine only.
type saslConn struct {
	c    *conn
	cfg  *SASL
	step saslStep
	// server is the mechanism's exchange in progress.
	server sasl.Server
	mech   sasl.Mechanism
	// reauth is set while a re-authentication runs; the previous session's
	// principal must come out of it again.
	reauth    bool
	principal auth.Principal
	// canReauth: the client sent SaslAuthenticate v1+ (Kafka's
	// connectedClientSupportsReauthentication).
	canReauth bool
	// expires is when the session ends (zero: never); a request after it
	// closes the connection.
	expires time.Time
	// closeAfter closes the connection once the answer is written (a
	// failed authentication).
	closeAfter bool
	// raw: SaslHandshake v0 chose the mechanism; its tokens come without
	// Kafka headers.
	raw bool
	// requested is the other mechanism a re-authentication named.
	requested sasl.Mechanism
}

func newSASLConn(c *conn, cfg *SASL) *saslConn {
	return &saslConn{c: c, cfg: cfg}
}

// authenticated reports whether requests beyond the exchange may be served.
func (s *saslConn) authenticated() bool { return s.step == saslComplete && !s.reauth }

// frameLimit is the largest request frame to read next: the SASL limit
// while an exchange runs, socket.request.max.bytes otherwise.
func (s *saslConn) frameLimit(normal int32) int32 {
	if s.authenticated() {
		return normal
	}
	if s.cfg.MaxReceiveSize > 0 {
		return s.cfg.MaxReceiveSize
	}
	return DefaultSASLMaxReceiveSize
}

// admit decides whether the request may reach its handler; false closes
// the connection (after the failed-authentication delay where Kafka
// delays). It runs before the body is decoded, as Kafka refuses before
// parsing.
func (s *saslConn) admit(h protocol.RequestHeader) bool {
	now := s.c.srv.clock.Now()
	if s.step == saslComplete && !s.reauth {
		// A re-authentication may begin even past the session's end (a
		// client re-authenticates only when it next sends); any other
		// request after it closes the connection, as Kafka's SocketServer
		// checks in that order.
		if h.APIKey == saslHandshakeKey && s.canReauth {
			s.reauth = true
			s.step = saslHandshakeNext
			return true
		}
		if !s.expires.IsZero() && now.After(s.expires) {
			s.c.srv.metrics.sasl.expired.WithLabelValues(s.c.listener).Inc()
			s.c.log.Info("closing connection: SASL session expired", "principal", s.principal.String(),
				"request", requestName(h.APIKey), "api_version", h.APIVersion, "expired_for", now.Sub(s.expires))
			return false
		}
		return true
	}
	switch {
	case h.APIKey == protocol.ApiVersionsKey && s.step == saslHandshakeOrVersions:
		// A version it does not serve gets the KIP-511 answer and the
		// client asks again, as Kafka leaves its state for it.
		if v, ok := s.c.registry.Supported(protocol.ApiVersionsKey); ok && h.APIVersion >= v.Min && h.APIVersion <= v.Max {
			s.step = saslHandshakeNext
		}
		return true
	case h.APIKey == saslHandshakeKey && (s.step == saslHandshakeOrVersions || s.step == saslHandshakeNext):
		return true
	case h.APIKey == saslAuthenticateKey && (s.step == saslAuthenticateNext || s.step == saslBadMechanism):
		return true
	}
	what := "handshake"
	if s.step >= saslAuthenticateNext {
		what = "authentication"
	}
	s.fail(s.c.ctx, saslReasonIllegalState, fmt.Errorf("unexpected Kafka request of type %s during SASL %s", requestName(h.APIKey), what))
	return false
}

// The SASL API keys.
const (
	saslHandshakeKey    = 17
	saslAuthenticateKey = 36
)

// Handshake answers SaslHandshake (api.SASLExchange).
func (s *saslConn) Handshake(ctx context.Context, req *kmsg.SASLHandshakeRequest) *kmsg.SASLHandshakeResponse {
	resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
	if s.authenticated() {
		// A client that cannot re-authenticate: KafkaApis answers.
		resp.ErrorCode = kerr.IllegalSaslState.Code
		return resp
	}
	for _, m := range s.cfg.Mechanisms {
		resp.SupportedMechanisms = append(resp.SupportedMechanisms, string(m))
	}
	mech := sasl.Mechanism(req.Mechanism)
	if !slices.Contains(s.cfg.Mechanisms, mech) {
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		s.fail(ctx, saslReasonMechanism, fmt.Errorf("unsupported SASL mechanism %q", req.Mechanism))
		return resp
	}
	if s.reauth && mech != s.mech {
		// Kafka answers the handshake and fails the first token.
		s.step, s.requested = saslBadMechanism, mech
		return resp
	}
	server, err := s.cfg.Config.NewServer(mech)
	if err != nil {
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		s.fail(ctx, saslReasonMechanism, err)
		return resp
	}
	s.server, s.mech, s.step = server, mech, saslAuthenticateNext
	s.raw = req.Version == 0
	return resp
}

// Authenticate answers SaslAuthenticate (api.SASLExchange).
func (s *saslConn) Authenticate(ctx context.Context, req *kmsg.SASLAuthenticateRequest) api.Response {
	switch s.step {
	case saslComplete:
		return api.Reply(api.IllegalSASLAuthenticate(req))
	case saslBadMechanism:
		s.fail(ctx, saslReasonMechanismChange, fmt.Errorf("SASL mechanism '%s' requested by client is not supported for re-authentication of mechanism '%s'", s.requested, s.mech))
		return api.CloseConnection(errors.New("re-authentication with another SASL mechanism"))
	}
	if req.Version > 0 {
		s.canReauth = true
	}
	resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	now := s.c.srv.clock.Now()
	challenge, done, err := s.server.Step(req.SASLAuthBytes, now)
	if err != nil {
		return s.refuse(ctx, resp, saslReasonCredentials, sasl.ClientMessage(err, s.mech, s.reauth), err)
	}
	resp.SASLAuthBytes = challenge
	if resp.SASLAuthBytes == nil {
		resp.SASLAuthBytes = []byte{}
	}
	if !done {
		return api.Reply(resp)
	}
	principal := s.server.Principal()
	if s.reauth && principal != s.principal {
		msg := fmt.Sprintf("Cannot change principals during re-authentication from %s.%s: %s.%s",
			s.principal.Type, s.principal.Name, principal.Type, principal.Name)
		return s.refuse(ctx, resp, saslReasonPrincipalChange, msg, errors.New(msg))
	}
	lifetime, bounded := sasl.SessionLifetime(s.server, s.cfg.MaxReauth[s.mech])
	s.expires = time.Time{}
	if bounded {
		resp.SessionLifetimeMillis = lifetime.Milliseconds()
		s.expires = now.Add(lifetime)
	}
	s.succeed(principal)
	return api.Reply(resp)
}

// succeed completes the exchange: the connection is principal from now on.
func (s *saslConn) succeed(principal auth.Principal) {
	m := s.c.srv.metrics.sasl
	if s.reauth {
		m.reauthenticated.WithLabelValues(s.c.listener, string(s.mech)).Inc()
	} else {
		m.authenticated.WithLabelValues(s.c.listener, string(s.mech)).Inc()
	}
	s.principal, s.reauth, s.step, s.server = principal, false, saslComplete, nil
	s.c.state.Principal = principal
}

// refuse answers SASL_AUTHENTICATION_FAILED with msg after the delay and
// closes the connection once it is written.
func (s *saslConn) refuse(ctx context.Context, resp *kmsg.SASLAuthenticateResponse, reason, msg string, err error) api.Response {
	resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
	resp.ErrorMessage = &msg
	resp.SASLAuthBytes = []byte{}
	s.fail(ctx, reason, err)
	return api.Reply(resp)
}

// fail counts and logs a failed (re-)authentication, waits out
// connection.failed.authentication.delay.ms and marks the connection to
// close after its answer.
func (s *saslConn) fail(ctx context.Context, reason string, err error) {
	s.countFailure(reason)
	s.c.log.Info("SASL authentication failed; closing the connection", "reason", reason,
		"mechanism", s.mechLabel(), "reauthentication", s.reauth, "err", err)
	s.closeAfter = true
	s.delay(ctx)
}

func (s *saslConn) countFailure(reason string) {
	m := s.c.srv.metrics.sasl
	if s.reauth {
		m.reauthFailed.WithLabelValues(s.c.listener, s.mechLabel(), reason).Inc()
		return
	}
	m.failed.WithLabelValues(s.c.listener, s.mechLabel(), reason).Inc()
}

func (s *saslConn) mechLabel() string {
	if s.mech == "" {
		return saslNoMechanism
	}
	return string(s.mech)
}

// delay waits the failed-authentication delay, or until the connection is
// cancelled (shutdown).
func (s *saslConn) delay(ctx context.Context) {
	if s.cfg.FailedDelay <= 0 {
		return
	}
	t := s.c.srv.clock.NewTimer(s.cfg.FailedDelay)
	defer t.Stop()
	select {
	case <-t.C():
	case <-ctx.Done():
	}
}

// readFailed counts a frame that could not be read while an exchange ran:
// larger than sasl.server.max.receive.size, or cut off.
func (s *saslConn) readFailed(err error) {
	if s.authenticated() {
		return
	}
	var tooLarge *protocol.FrameTooLargeError
	switch {
	case errors.As(err, &tooLarge):
		s.countFailure(saslReasonFrameTooLarge)
	case errors.Is(err, io.ErrUnexpectedEOF):
		s.countFailure(saslReasonTruncated)
	}
}

// requestFailed counts a request of the exchange that could not be parsed.
func (s *saslConn) requestFailed() {
	if !s.authenticated() {
		s.countFailure(saslReasonMalformed)
	}
}

// divertAuthenticated looks at the first bytes after a SASL listener's
// connection authenticated: the listener's other protocol (the raft RPC on
// a CONTROLLER listener) is handed to its server, so it runs only for
// peers that authenticated; a Kafka request is served as usual. It checks
// once per connection; true means the connection was handed over.
func (c *conn) divertAuthenticated(br *bufio.Reader) bool {
	d := c.divert
	c.divert = nil
	head, err := br.Peek(d.PrefixLen)
	if err != nil || !d.Match(head) {
		// A read error is met again (and handled) by the frame read.
		return false
	}
	peeked := append([]byte(nil), head...)
	br.Discard(len(peeked))
	c.nc.SetReadDeadline(time.Time{})
	c.diverted = true
	go d.Serve(&prefixedConn{Conn: c.nc, r: br}, peeked)
	return true
}

// rawTokens reports whether the next frame is a raw SASL token: after
// SaslHandshake v0 Kafka reads the mechanism's messages framed by their
// size alone, without Kafka headers, until the exchange completes.
func (s *saslConn) rawTokens() bool { return s.raw && s.step == saslAuthenticateNext }

// serveRawToken runs one raw token through the mechanism and writes its
// answer the same way; a failure closes the connection without an answer
// (after the delay), as Kafka does with raw tokens. false means close.
func (c *conn) serveRawToken(token []byte) bool {
	s := c.sasl
	now := c.srv.clock.Now()
	challenge, done, err := s.server.Step(token, now)
	if err != nil {
		s.fail(c.ctx, saslReasonCredentials, err)
		return false
	}
	if done {
		principal := s.server.Principal()
		if s.reauth && principal != s.principal {
			s.fail(c.ctx, saslReasonPrincipalChange, fmt.Errorf("cannot change principals during re-authentication from %s to %s", s.principal, principal))
			return false
		}
		lifetime, bounded := sasl.SessionLifetime(s.server, s.cfg.MaxReauth[s.mech])
		s.expires = time.Time{}
		if bounded {
			s.expires = now.Add(lifetime)
		}
		s.succeed(principal)
	}
	if err := c.send(outgoing{rawToken: true, raw: challenge}); err != nil {
		if !c.isDraining() {
			c.log.Info("writing a SASL token failed; closing the connection", "err", err)
		}
		return false
	}
	return true
}
