package node

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluice-io/sluice/internal/auth/sasl"
	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/server"
)

// newSASL builds the authentication of every SASL listener the node serves
// from the listener's keys (Kafka's SaslChannelBuilder): its enabled
// mechanisms, each mechanism's JAAS config (PLAIN users, OAUTHBEARER's
// unsecured validator options), SCRAM credentials from the metadata image,
// the JWT validator with its JWKS, and the reauth, delay and size limits.
// A bad value stops start-up naming the key, never the value.
func (n *Node) newSASL() (map[string]*server.SASL, error) {
	out := map[string]*server.SASL{}
	for _, l := range n.cfg.Listeners() {
		if !n.cfg.IsSASLListener(l.Name) {
			continue
		}
		s, err := n.listenerSASL(l.Name)
		if err != nil {
			return nil, err
		}
		out[l.Name] = s
	}
	return out, nil
}

func (n *Node) listenerSASL(listener string) (*server.SASL, error) {
	s := &server.SASL{
		Config:         sasl.Config{Scram: sasl.ImageCredentials(func() *metadata.Image { return n.Image() })},
		MaxReauth:      map[sasl.Mechanism]time.Duration{},
		FailedDelay:    time.Duration(n.cfg.Int(config.ConnectionFailedAuthenticationDelayMs)) * time.Millisecond,
		MaxReceiveSize: n.cfg.Int(config.SASLServerMaxReceiveSize),
	}
	for _, name := range n.cfg.SASLEnabledMechanisms(listener) {
		m := sasl.Mechanism(name)
		s.Mechanisms = append(s.Mechanisms, m)
		reauth, key, _ := n.cfg.ListenerMechanismValue(listener, name, "connections.max.reauth.ms")
		if reauth != "" {
			ms, err := strconv.ParseInt(strings.TrimSpace(reauth), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("configuration %s: not a number of milliseconds", key)
			}
			s.MaxReauth[m] = time.Duration(ms) * time.Millisecond
		}
		entry, err := n.jaasEntry(listener, m)
		if err != nil {
			return nil, err
		}
		switch m {
		case sasl.Plain:
			if s.Config.PlainUsers, err = sasl.PlainUsersFromJAAS(entry); err != nil {
				return nil, fmt.Errorf("configuration %s: %w", sasl.JAASConfigKey(listener, m), err)
			}
		case sasl.OAuthBearer:
			if s.Config.Tokens, err = n.tokenValidator(listener, entry); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

// jaasEntry parses listener.name.<l>.<mechanism>.sasl.jaas.config; errors
// name the key, never a value.
func (n *Node) jaasEntry(listener string, m sasl.Mechanism) (sasl.JAASEntry, error) {
	key := sasl.JAASConfigKey(listener, m)
	v, _, ok := n.cfg.ListenerMechanismValue(listener, string(m), "sasl.jaas.config")
	if !ok {
		return sasl.JAASEntry{}, fmt.Errorf("configuration %s: must be set for SASL mechanism %s on listener %s", key, m, listener)
	}
	e, err := sasl.ParseServerJAASConfig(v)
	if err != nil {
		return sasl.JAASEntry{}, fmt.Errorf("configuration %s: %w", key, err)
	}
	return e, nil
}

// tokenValidator is OAUTHBEARER's validator: the JWT validator with a JWKS
// when the listener's callback handler is OAuthBearerValidatorCallbackHandler,
// else Kafka's default, the unsecured one.
func (n *Node) tokenValidator(listener string, entry sasl.JAASEntry) (sasl.TokenValidator, error) {
	value := func(key string) (string, string) {
		v, setAs, _ := n.cfg.ListenerMechanismValue(listener, string(sasl.OAuthBearer), key)
		return strings.TrimSpace(v), setAs
	}
	if class, _ := value("sasl.server.callback.handler.class"); class != config.OAuthBearerValidatorHandler {
		v, err := sasl.NewUnsecuredValidator(entry)
		if err != nil {
			return nil, fmt.Errorf("configuration %s: %w", sasl.JAASConfigKey(listener, sasl.OAuthBearer), err)
		}
		return v, nil
	}
	u, urlKey := value("sasl.oauthbearer.jwks.endpoint.url")
	refresh, refreshKey := value("sasl.oauthbearer.jwks.endpoint.refresh.ms")
	refreshMs, err := strconv.ParseInt(refresh, 10, 64)
	if err != nil || refreshMs <= 0 {
		return nil, fmt.Errorf("configuration %s: must be a positive number of milliseconds", refreshKey)
	}
	keys, err := newJWKSource(u, time.Duration(refreshMs)*time.Millisecond, n.clk)
	if err != nil {
		return nil, fmt.Errorf("configuration %s: %w", urlKey, err)
	}
	skew, skewKey := value("sasl.oauthbearer.clock.skew.seconds")
	skewSec, err := strconv.Atoi(skew)
	if err != nil {
		return nil, fmt.Errorf("configuration %s: not a number of seconds", skewKey)
	}
	aud, _ := value("sasl.oauthbearer.expected.audience")
	var audience []string
	for _, a := range strings.Split(aud, ",") {
		if a = strings.TrimSpace(a); a != "" {
			audience = append(audience, a)
		}
	}
	iss, _ := value("sasl.oauthbearer.expected.issuer")
	sub, _ := value("sasl.oauthbearer.sub.claim.name")
	scope, _ := value("sasl.oauthbearer.scope.claim.name")
	return sasl.NewJWTValidator(sasl.JWTValidatorConfig{
		Keys: keys, ExpectedAudience: audience, ExpectedIssuer: iss,
		SubClaimName: sub, ScopeClaimName: scope, ClockSkew: time.Duration(skewSec) * time.Second,
	})
}

// jwksMinRefetch bounds refetches for an unknown key id, as Kafka's
// RefreshingHttpsJwks rate-limits them.
const jwksMinRefetch = 10 * time.Second

// jwkSource is the JWKS of sasl.oauthbearer.jwks.endpoint.url: read at
// start-up (a failure stops it), then read again when refresh has passed
// or a token names a key id it lacks (at most every jwksMinRefetch), on
// the authenticating connection; a failed refresh keeps the last keys.
type jwkSource struct {
	url     *url.URL
	refresh time.Duration
	clk     clock.Clock
	client  *http.Client

	mu      sync.Mutex
	keys    sasl.JWKS
	fetched time.Time
}

func newJWKSource(raw string, refresh time.Duration, clk clock.Clock) (*jwkSource, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "file" && u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("must be a file:, http: or https: URL")
	}
	s := &jwkSource{url: u, refresh: refresh, clk: clk, client: &http.Client{Timeout: 10 * time.Second}}
	keys, err := s.fetch()
	if err != nil {
		return nil, err
	}
	s.keys, s.fetched = keys, clk.Now()
	return s, nil
}

// Keys implements sasl.KeySet.
func (s *jwkSource) Keys(kid string) []sasl.JWK {
	s.mu.Lock()
	defer s.mu.Unlock()
	age := s.clk.Now().Sub(s.fetched)
	if age >= s.refresh || (kid != "" && !s.hasKey(kid) && age >= jwksMinRefetch) {
		s.fetched = s.clk.Now()
		if keys, err := s.fetch(); err == nil {
			s.keys = keys
		}
	}
	return s.keys
}

func (s *jwkSource) hasKey(kid string) bool {
	for _, k := range s.keys {
		if k.KeyID == kid {
			return true
		}
	}
	return false
}

func (s *jwkSource) fetch() (sasl.JWKS, error) {
	var data []byte
	var err error
	if s.url.Scheme == "file" {
		data, err = os.ReadFile(s.url.Path)
	} else {
		data, err = s.get()
	}
	if err != nil {
		return nil, fmt.Errorf("reading the JWKS: %w", err)
	}
	return sasl.ParseJWKS(data)
}

func (s *jwkSource) get() ([]byte, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, s.url.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP status %d", resp.StatusCode)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 1<<20))
}
