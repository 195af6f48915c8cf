// Package sasl holds Kafka's SASL mechanisms as server-side state machines:
// PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER, each behaving as
// Kafka's SaslServer of that name. A Server does no I/O and starts no
// goroutine: the connection's exchange (SaslHandshake, SaslAuthenticate,
// internal/server) feeds it each client message with the current time and
// sends back what it answers. Credentials come through interfaces
// (PlainAuthenticator, CredentialStore, TokenValidator, KeySet), so the
// metadata image, the listener's JAAS config or a refreshed JWKS can stand
// behind them. See docs/security.md.
package sasl

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sluice-io/sluice/internal/auth"
)

// Mechanism is a SASL mechanism name as sasl.enabled.mechanisms and
// SaslHandshake spell it.
type Mechanism string

// The mechanisms Sluice serves.
const (
	Plain       Mechanism = "PLAIN"
	ScramSHA256 Mechanism = "SCRAM-SHA-256"
	ScramSHA512 Mechanism = "SCRAM-SHA-512"
	OAuthBearer Mechanism = "OAUTHBEARER"
)

// Server is the server side of one SASL exchange, Kafka's SaslServer. It is
// used by one connection at a time and is not safe for concurrent use.
type Server interface {
	// Mechanism names the exchange's mechanism.
	Mechanism() Mechanism
	// Step consumes the client's next message (SaslAuthenticate's
	// auth_bytes) and returns the bytes to answer with. done reports that
	// the client is authenticated; the answer is still sent (SCRAM's
	// server-final message). An error ends the exchange: the connection
	// answers SASL_AUTHENTICATION_FAILED with ClientMessage(err, ...) and
	// closes. now is the time of the message, for token expiry.
	Step(challengeResponse []byte, now time.Time) (response []byte, done bool, err error)
	// Principal is who authenticated, User:<authorization id>; the zero
	// Principal until Step reported done.
	Principal() auth.Principal
	// SessionLifetime reports how long the credential lets the session
	// live from the final Step (KIP-368): bounded is false when the
	// credential sets no limit. OAUTHBEARER's token expiry bounds it, as
	// Kafka's credential lifetime does. Use SessionLifetime(s, maxReauth)
	// to combine it with connections.max.reauth.ms.
	SessionLifetime() (lifetime time.Duration, bounded bool)
}

// SessionLifetime is the session_lifetime_ms Kafka's SaslServerAuthenticator
// answers after s completed: the smaller of connections.max.reauth.ms
// (maxReauth; 0 or less for none) and the credential's remaining lifetime,
// never negative. bounded is false when neither limits the session, which
// SaslAuthenticate answers as 0.
func SessionLifetime(s Server, maxReauth time.Duration) (lifetime time.Duration, bounded bool) {
	cred, credBounded := s.SessionLifetime()
	switch {
	case credBounded && maxReauth > 0:
		lifetime = min(cred, maxReauth)
	case credBounded:
		lifetime = cred
	case maxReauth > 0:
		lifetime = maxReauth
	default:
		return 0, false
	}
	return max(lifetime, 0), true
}

// Error is a failed exchange. Its Error text is for the broker's log and
// never carries a password, proof or token.
type Error struct {
	Mechanism Mechanism
	// Client is the message Kafka sends the client in SaslAuthenticate's
	// error_message (its SaslAuthenticationException); "" where Kafka
	// hides the reason behind its generic text (a SaslException), see
	// ClientMessage.
	Client string
	// Reason is the detail for the log.
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("SASL/%s: %s", e.Mechanism, e.Reason)
}

// ClientMessage is the error_message the connection sends for err, as
// Kafka's SaslServerAuthenticator words it; reauth selects the
// re-authentication wording.
func ClientMessage(err error, mech Mechanism, reauth bool) string {
	var e *Error
	if errors.As(err, &e) && e.Client != "" {
		return e.Client
	}
	what := "authentication"
	if reauth {
		what = "re-authentication"
	}
	return "Authentication failed during " + what +
		" due to invalid credentials with SASL mechanism " + string(mech)
}

// refuse is an Error whose reason Kafka hides from the client.
func refuse(m Mechanism, format string, args ...any) *Error {
	return &Error{Mechanism: m, Reason: fmt.Sprintf(format, args...)}
}

// refuseWith is an Error whose message Kafka sends to the client.
func refuseWith(m Mechanism, client string) *Error {
	return &Error{Mechanism: m, Client: client, Reason: client}
}

// Config is what a listener's mechanisms authenticate against. A nil field
// leaves its mechanisms unavailable.
type Config struct {
	// PlainUsers checks PLAIN passwords, usually PlainUsersFromJAAS of the
	// listener's listener.name.<l>.plain.sasl.jaas.config.
	PlainUsers PlainAuthenticator
	// Scram looks up SCRAM credentials (the metadata image).
	Scram CredentialStore
	// Tokens validates OAUTHBEARER tokens: an UnsecuredValidator or a
	// JWTValidator.
	Tokens TokenValidator
	// Rand draws SCRAM server nonces; nil is crypto/rand.
	Rand io.Reader
}

// NewServer starts an exchange of mechanism m, or fails when m is unknown
// or not configured (Kafka's UNSUPPORTED_SASL_MECHANISM).
func (c Config) NewServer(m Mechanism) (Server, error) {
	switch {
	case m == Plain && c.PlainUsers != nil:
		return NewPlainServer(c.PlainUsers), nil
	case m.IsScram() && c.Scram != nil:
		return NewScramServer(m, c.Scram, c.Rand)
	case m == OAuthBearer && c.Tokens != nil:
		return NewOAuthBearerServer(c.Tokens), nil
	}
	return nil, fmt.Errorf("SASL mechanism %q is not enabled", m)
}

// JAASConfigKey is the broker key holding listener l's JAAS config for m,
// listener.name.<l>.<m>.sasl.jaas.config, both lower-cased as Kafka's
// JaasContext.loadServerContext looks them up.
func JAASConfigKey(listener string, m Mechanism) string {
	return "listener.name." + strings.ToLower(listener) + "." +
		strings.ToLower(string(m)) + ".sasl.jaas.config"
}
