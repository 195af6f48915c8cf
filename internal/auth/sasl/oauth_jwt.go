package sasl

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// JWK is one verification key of a JSON Web Key Set.
type JWK struct {
	KeyID string
	// Algorithm and Use are the key's alg and use, "" when absent.
	Algorithm string
	Use       string
	// Key is an *rsa.PublicKey, *ecdsa.PublicKey or ed25519.PublicKey.
	Key crypto.PublicKey
}

// KeySet holds the keys of sasl.oauthbearer.jwks.endpoint.url. The broker
// loads it from the file:// or https:// URL and refreshes it every
// sasl.oauthbearer.jwks.endpoint.refresh.ms; it must be safe for
// concurrent use.
type KeySet interface {
	// Keys returns the current keys. kid is the token's key id ("" when
	// it names none), so that an implementation can refresh early when it
	// has no such key, as Kafka's RefreshingHttpsJwks does; the validator
	// selects among the keys itself.
	Keys(kid string) []JWK
}

// JWKS is a fixed key set.
type JWKS []JWK

// Keys returns every key of the set.
func (s JWKS) Keys(string) []JWK { return s }

// ParseJWKS reads a JSON Web Key Set ({"keys": [...]}) keeping the public
// keys of its RSA, EC and OKP (Ed25519) entries. A key that does not parse
// is skipped, as jose4j's JsonWebKeySet skips it.
func ParseJWKS(data []byte) (JWKS, error) {
	var raw struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("parsing the JWKS: %w", err)
	}
	var set JWKS
	for _, r := range raw.Keys {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(r); err != nil || !k.Valid() {
			continue
		}
		pub := k.Public()
		switch pub.Key.(type) {
		case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
			set = append(set, JWK{KeyID: k.KeyID, Algorithm: k.Algorithm, Use: k.Use, Key: pub.Key})
		}
	}
	return set, nil
}

// DefaultOAuthClockSkew is sasl.oauthbearer.clock.skew.seconds' default.
const DefaultOAuthClockSkew = 30 * time.Second

// JWTValidatorConfig is the broker's sasl.oauthbearer.* settings for the
// validator of KIP-768.
type JWTValidatorConfig struct {
	// Keys verify the signatures (sasl.oauthbearer.jwks.endpoint.url).
	Keys KeySet
	// ExpectedAudience is sasl.oauthbearer.expected.audience: the token's
	// aud must name one of them. When empty, a token with an aud claim
	// is refused, as jose4j's default audience check does in Kafka.
	ExpectedAudience []string
	// ExpectedIssuer is sasl.oauthbearer.expected.issuer; "" checks none.
	ExpectedIssuer string
	// SubClaimName and ScopeClaimName are sasl.oauthbearer.sub.claim.name
	// and sasl.oauthbearer.scope.claim.name; "" is sub and scope.
	SubClaimName   string
	ScopeClaimName string
	// ClockSkew is sasl.oauthbearer.clock.skew.seconds (Kafka's default
	// is DefaultOAuthClockSkew).
	ClockSkew time.Duration
}

// JWTValidator validates signed JWTs, Kafka's OAuthBearerValidatorCallbackHandler
// with its ValidatorAccessTokenValidator.
type JWTValidator struct {
	c JWTValidatorConfig
}

// NewJWTValidator checks c and makes its validator.
func NewJWTValidator(c JWTValidatorConfig) (*JWTValidator, error) {
	if c.Keys == nil {
		return nil, fmt.Errorf("sasl.oauthbearer.jwks.endpoint.url must be set for the JWT validator")
	}
	if c.ClockSkew < 0 {
		return nil, fmt.Errorf("sasl.oauthbearer.clock.skew.seconds must not be negative")
	}
	if c.SubClaimName = strings.TrimSpace(c.SubClaimName); c.SubClaimName == "" {
		c.SubClaimName = "sub"
	}
	if c.ScopeClaimName = strings.TrimSpace(c.ScopeClaimName); c.ScopeClaimName == "" {
		c.ScopeClaimName = "scope"
	}
	c.ExpectedAudience = slices.Clone(c.ExpectedAudience)
	return &JWTValidator{c: c}, nil
}

// jwtAlgorithms are the signatures accepted: jose4j accepts all but none;
// the HMAC ones are left out, a JWKS publishing no secret keys.
var jwtAlgorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// Validate verifies token's signature with a key of the set and checks its
// claims as Kafka's validator (jose4j's JwtConsumer) does: exp and iat
// required, exp not passed and nbf reached within the clock skew, the
// audience and issuer when configured, a non-blank subject and a scope
// without blank or duplicate items.
func (v *JWTValidator) Validate(token string, now time.Time) (Token, error) {
	token = strings.TrimSpace(token)
	if parts := strings.Split(token, "."); len(parts) != 3 || slices.Contains(parts, "") {
		return Token{}, invalidToken("malformed JWT: expected three sections (header, payload, and signature)")
	}
	parsed, err := jwt.ParseSigned(token, jwtAlgorithms)
	if err != nil || len(parsed.Headers) != 1 {
		return Token{}, invalidToken("could not parse the access token: %v", err)
	}
	claims, err := v.verify(parsed)
	if err != nil {
		return Token{}, err
	}
	return v.checkClaims(claims, now)
}

// verify finds the keys the token's header allows (kid, key type, use,
// alg, as jose4j's VerificationJwkSelector) and returns the claims of the
// first that verifies the signature.
func (v *JWTValidator) verify(t *jwt.JSONWebToken) (map[string]any, error) {
	h := t.Headers[0]
	candidates := 0
	for _, k := range v.c.Keys.Keys(h.KeyID) {
		if !keyFits(k, h.KeyID, h.Algorithm) {
			continue
		}
		candidates++
		var claims map[string]any
		if err := t.Claims(k.Key, &claims); err == nil && claims != nil {
			return claims, nil
		}
	}
	if candidates == 0 {
		return nil, invalidToken("unable to find a suitable verification key for a JWS with kid %q and alg %s", h.KeyID, h.Algorithm)
	}
	return nil, invalidToken("the JWS signature did not verify (kid %q, alg %s)", h.KeyID, h.Algorithm)
}

func keyFits(k JWK, kid, alg string) bool {
	if (kid != "" && k.KeyID != kid) || (k.Use != "" && k.Use != "sig") || (k.Algorithm != "" && k.Algorithm != alg) {
		return false
	}
	switch key := k.Key.(type) {
	case *rsa.PublicKey:
		// jose4j refuses RSA keys under 2048 bits.
		return (strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS")) && key.N.BitLen() >= 2048
	case *ecdsa.PublicKey:
		return strings.HasPrefix(alg, "ES")
	case ed25519.PublicKey:
		return alg == string(jose.EdDSA)
	}
	return false
}
