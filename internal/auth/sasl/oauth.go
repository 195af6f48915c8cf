package sasl

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/sluice-io/sluice/internal/auth"
)

// Token is a validated OAUTHBEARER token, Kafka's OAuthBearerToken.
type Token struct {
	// Principal is the principal name: the sub claim, or the claim the
	// validator is configured to read.
	Principal string
	// Scope is the token's scope, sorted.
	Scope []string
	// Expiry is the exp claim, which bounds the session (KIP-368).
	Expiry time.Time
	// IssuedAt is the iat claim, zero when the token has none.
	IssuedAt time.Time
}

// TokenError refuses a token with the error RFC 7628 section 3.2.2 sends
// back, as Kafka's OAuthBearerValidatorCallback.error carries it.
type TokenError struct {
	// Status is "invalid_token" or "insufficient_scope".
	Status string
	// Scope and OpenIDConfiguration are sent when set.
	Scope               string
	OpenIDConfiguration string
	// Reason is the detail for the broker's log.
	Reason string
}

func (e *TokenError) Error() string { return e.Status + ": " + e.Reason }

func invalidToken(format string, args ...any) *TokenError {
	return &TokenError{Status: "invalid_token", Reason: fmt.Sprintf(format, args...)}
}

// json is the error's JSON as Kafka's OAuthBearerSaslServer writes it,
// spacing included.
func (e *TokenError) json() string {
	s := `{"status":"` + e.Status + `"`
	if e.Scope != "" {
		s += `, "scope":"` + e.Scope + `"`
	}
	if e.OpenIDConfiguration != "" {
		s += `, "openid-configuration":"` + e.OpenIDConfiguration + `"`
	}
	return s + "}"
}

// TokenValidator validates OAUTHBEARER tokens, Kafka's validator callback
// handler. A refused token is a *TokenError; any other error is the
// server's own failure. It must be safe for concurrent use.
type TokenValidator interface {
	Validate(token string, now time.Time) (Token, error)
}

// oauthServer is Kafka's OAuthBearerSaslServer (RFC 7628). A refused token
// is answered with the JSON error as a challenge, not a failure; the client
// acknowledges it with a single %x01, and only then does the exchange fail
// with the JSON as the client's error message.
type oauthServer struct {
	tokens    TokenValidator
	sentError string
	ended     bool
	principal auth.Principal
	lifetime  time.Duration
}

// NewOAuthBearerServer starts an OAUTHBEARER exchange validating tokens
// with tokens.
func NewOAuthBearerServer(tokens TokenValidator) Server {
	return &oauthServer{tokens: tokens}
}

func (s *oauthServer) Mechanism() Mechanism { return OAuthBearer }

func (s *oauthServer) Principal() auth.Principal { return s.principal }

// SessionLifetime is the token's remaining lifetime at authentication.
func (s *oauthServer) SessionLifetime() (time.Duration, bool) {
	return s.lifetime, !s.principal.IsZero()
}

func (s *oauthServer) Step(msg []byte, now time.Time) ([]byte, bool, error) {
	resp, done, err := s.step(msg, now)
	if err != nil || done {
		s.ended = true
	}
	return resp, done, err
}

func (s *oauthServer) step(msg []byte, now time.Time) ([]byte, bool, error) {
	if s.ended {
		return nil, false, refuse(OAuthBearer, "unexpected message after the exchange ended")
	}
	if len(msg) == 1 && msg[0] == 0x01 && s.sentError != "" {
		return nil, false, refuseWith(OAuthBearer, s.sentError)
	}
	// Anything else starts over, as in Kafka: a client may try another
	// token after an error.
	s.sentError = ""
	r, err := parseOAuthInitialResponse(string(msg))
	if err != nil {
		return nil, false, refuse(OAuthBearer, "%v", err)
	}
	tok, err := s.tokens.Validate(r.token, now)
	var te *TokenError
	switch {
	case errors.As(err, &te):
		s.sentError = te.json()
		return []byte(s.sentError), false, nil
	case err != nil:
		return nil, false, refuse(OAuthBearer, "Authentication could not be performed due to an internal error on the server: %v", err)
	}
	if r.authzid != "" && r.authzid != tok.Principal {
		return nil, false, refuseWith(OAuthBearer, fmt.Sprintf(
			"Authentication failed: Client requested an authorization id (%s) that is different from the token's principal name (%s)",
			r.authzid, tok.Principal))
	}
	// Every extension is accepted, as both of Kafka's validator callback
	// handlers accept them.
	s.principal = auth.User(tok.Principal)
	s.lifetime = tok.Expiry.Sub(now)
	return []byte{}, true, nil
}

type oauthInitialResponse struct {
	authzid    string
	token      string
	extensions map[string]string
}

// The patterns of Kafka's OAuthBearerClientInitialResponse.
var (
	oauthKey   = regexp.MustCompile(`^[A-Za-z]+$`)
	oauthValue = regexp.MustCompile(`^[\x21-\x7E \t\r\n]+$`)
	oauthAuth  = regexp.MustCompile(`^(\w+) +([-_~+/.a-zA-Z0-9]+=*)$`)
)

// parseOAuthInitialResponse reads RFC 7628's client initial response:
// gs2-header %x01 *(key "=" value %x01) %x01, with the token in auth.
func parseOAuthInitialResponse(msg string) (oauthInitialResponse, error) {
	var r oauthInitialResponse
	bad := errors.New("Invalid OAUTHBEARER client first message")
	rest, ok := strings.CutPrefix(msg, "n,")
	if !ok {
		return r, bad
	}
	authzField, rest, ok := strings.Cut(rest, ",")
	if !ok {
		return r, bad
	}
	if authzField != "" {
		if r.authzid, ok = strings.CutPrefix(authzField, "a="); !ok || !isSaslName(r.authzid) {
			return r, bad
		}
	}
	pairs, ok := strings.CutPrefix(rest, "\x01")
	if !ok || !strings.HasSuffix(pairs, "\x01") {
		return r, bad
	}
	kv := map[string]string{}
	for _, p := range strings.SplitAfter(pairs[:len(pairs)-1], "\x01") {
		k, v, ok := strings.Cut(strings.TrimSuffix(p, "\x01"), "=")
		if p == "" {
			continue
		}
		if !ok || !strings.HasSuffix(p, "\x01") || !oauthKey.MatchString(k) || !oauthValue.MatchString(v) {
			return r, bad
		}
		kv[k] = v
	}
	auth, ok := kv["auth"]
	if !ok {
		return r, fmt.Errorf("%v: 'auth' not specified", bad)
	}
	delete(kv, "auth")
	m := oauthAuth.FindStringSubmatch(auth)
	if m == nil {
		return r, fmt.Errorf("%v: invalid 'auth' format", bad)
	}
	if !strings.EqualFold(m[1], "bearer") {
		return r, fmt.Errorf("Invalid scheme in OAUTHBEARER client first message: %s", m[1])
	}
	r.token, r.extensions = m[2], kv
	return r, nil
}
