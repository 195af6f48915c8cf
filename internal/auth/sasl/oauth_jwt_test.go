package sasl

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/twmb/franz-go/pkg/sasl/oauth"

	"github.com/sluice-io/sluice/internal/auth"
)

// jwtKeys are the issuer's signing keys of a test, published as a JWKS.
type jwtKeys struct {
	rsa     *rsa.PrivateKey
	ec      *ecdsa.PrivateKey
	ed      ed25519.PrivateKey
	other   *rsa.PrivateKey // not published
	weakRSA *rsa.PrivateKey // published, 1024 bits
	jwks    []byte
}

func newJWTKeys(t testing.TB) *jwtKeys {
	t.Helper()
	k := &jwtKeys{}
	var err error
	if k.rsa, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		t.Fatal(err)
	}
	if k.other, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		t.Fatal(err)
	}
	if k.weakRSA, err = rsa.GenerateKey(rand.Reader, 1024); err != nil {
		t.Fatal(err)
	}
	if k.ec, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		t.Fatal(err)
	}
	if _, k.ed, err = ed25519.GenerateKey(rand.Reader); err != nil {
		t.Fatal(err)
	}
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: k.rsa.Public(), KeyID: "rsa", Algorithm: "RS256", Use: "sig"},
		{Key: k.ec.Public(), KeyID: "ec", Use: "sig"},
		{Key: k.ed.Public(), KeyID: "ed"},
		{Key: k.weakRSA.Public(), KeyID: "weak"},
		{Key: []byte("0123456789abcdef0123456789abcdef"), KeyID: "hmac"},
	}}
	raw, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	// A key of an unknown type is skipped, not fatal, as by jose4j.
	k.jwks = []byte(strings.Replace(string(raw), `"keys":[`, `"keys":[{"kty":"XYZ","kid":"odd"},`, 1))
	return k
}

func signJWT(t testing.TB, alg jose.SignatureAlgorithm, key any, kid string, claims map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// recordingKeys is a KeySet that remembers the kids asked for.
type recordingKeys struct {
	JWKS
	asked []string
}

func (r *recordingKeys) Keys(kid string) []JWK {
	r.asked = append(r.asked, kid)
	return r.JWKS
}

func TestJWTValidatorFranzGo(t *testing.T) {
	keys := newJWTKeys(t)
	set, err := ParseJWKS(keys.jwks)
	if err != nil {
		t.Fatal(err)
	}
	if len(set) != 4 {
		t.Fatalf("JWKS has %d keys, want the 4 public ones", len(set))
	}
	rec := &recordingKeys{JWKS: set}
	v, err := NewJWTValidator(JWTValidatorConfig{Keys: rec, ExpectedAudience: []string{"kafka", "other"},
		ExpectedIssuer: "https://issuer.example", ClockSkew: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	claims := func(extra map[string]any) map[string]any {
		c := map[string]any{"sub": "alice", "iss": "https://issuer.example", "aud": "kafka",
			"iat": t0.Add(-time.Minute).Unix(), "exp": t0.Add(time.Hour).Unix(), "scope": "produce"}
		for k, v := range extra {
			if v == nil {
				delete(c, k)
			} else {
				c[k] = v
			}
		}
		return c
	}
	rs := func(extra map[string]any) string { return signJWT(t, jose.RS256, keys.rsa, "rsa", claims(extra)) }
	const invalid = `{"status":"invalid_token"}`
	cases := []struct {
		name, token string
		ok          bool
	}{
		{"RS256", rs(nil), true},
		{"ES256", signJWT(t, jose.ES256, keys.ec, "ec", claims(nil)), true},
		{"EdDSA", signJWT(t, jose.EdDSA, keys.ed, "ed", claims(nil)), true},
		{"no kid: the key that verifies", signJWT(t, jose.ES256, keys.ec, "", claims(nil)), true},
		{"audience array", rs(map[string]any{"aud": []string{"x", "other"}}), true},
		{"expired within the skew", rs(map[string]any{"exp": t0.Add(-29 * time.Second).Unix()}), true},
		{"nbf within the skew", rs(map[string]any{"nbf": t0.Add(29 * time.Second).Unix()}), true},
		{"expired", rs(map[string]any{"exp": t0.Add(-30 * time.Second).Unix()}), false},
		{"not yet valid", rs(map[string]any{"nbf": t0.Add(31 * time.Second).Unix()}), false},
		{"no exp", rs(map[string]any{"exp": nil}), false},
		{"no iat", rs(map[string]any{"iat": nil}), false},
		{"exp a string", rs(map[string]any{"exp": "later"}), false},
		{"wrong audience", rs(map[string]any{"aud": "billing"}), false},
		{"no audience", rs(map[string]any{"aud": nil}), false},
		{"wrong issuer", rs(map[string]any{"iss": "https://evil.example"}), false},
		{"no issuer", rs(map[string]any{"iss": nil}), false},
		{"no sub", rs(map[string]any{"sub": nil}), false},
		{"blank sub", rs(map[string]any{"sub": " "}), false},
		{"sub a number", rs(map[string]any{"sub": 7}), false},
		{"duplicate scope", rs(map[string]any{"scope": []string{"a", "a"}}), false},
		{"blank scope item", rs(map[string]any{"scope": []string{"a", ""}}), false},
		{"bad signature: another key under the kid", signJWT(t, jose.RS256, keys.other, "rsa", claims(nil)), false},
		{"unknown kid", signJWT(t, jose.RS256, keys.rsa, "nope", claims(nil)), false},
		{"alg the key does not allow", signJWT(t, jose.RS512, keys.rsa, "rsa", claims(nil)), false},
		{"RSA key under 2048 bits", signJWT(t, jose.RS256, keys.weakRSA, "weak", claims(nil)), false},
		{"HS256 with the published secret", signJWT(t, jose.HS256, []byte("0123456789abcdef0123456789abcdef"), "hmac", claims(nil)), false},
		{"alg none", unsecuredJWT(t, map[string]any{"alg": "none", "kid": "rsa"}, claims(nil)), false},
		{"tampered payload", tamperPayload(t, rs(nil)), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := NewOAuthBearerServer(v)
			r := exchange(t, oauth.Auth{Token: c.token}.AsMechanism(), srv, t0)
			if r.clientErr != nil {
				t.Fatal(r.clientErr)
			}
			if c.ok {
				if r.serverErr != nil || srv.Principal() != auth.User("alice") {
					t.Fatalf("refused: %v", r.serverErr)
				}
				return
			}
			wantRefused(t, r.serverErr, OAuthBearer, invalid)
			if r.steps != 2 {
				t.Fatalf("failed at step %d, want the %%x01 acknowledgement", r.steps)
			}
		})
	}
	if rec.asked[0] != "rsa" {
		t.Fatalf("KeySet asked for %q, want the token's kid", rec.asked[0])
	}
}

// tamperPayload swaps the token's sub for another, keeping the signature.
func tamperPayload(t *testing.T, tok string) string {
	parts := strings.Split(tok, ".")
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), `"alice"`, `"admin"`, 1))
	return parts[0] + "." + base64.RawURLEncoding.EncodeToString(b) + "." + parts[2]
}

func TestJWTValidatorClaims(t *testing.T) {
	keys := newJWTKeys(t)
	set, err := ParseJWKS(keys.jwks)
	if err != nil {
		t.Fatal(err)
	}
	base := map[string]any{"iat": t0.Unix(), "exp": t0.Add(time.Hour).Unix()}
	with := func(extra map[string]any) map[string]any {
		c := map[string]any{}
		for k, v := range base {
			c[k] = v
		}
		for k, v := range extra {
			c[k] = v
		}
		return c
	}

	// Custom claim names, no audience or issuer expected, skew 0.
	v, err := NewJWTValidator(JWTValidatorConfig{Keys: set, SubClaimName: "client_id", ScopeClaimName: "scp"})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := v.Validate(signJWT(t, jose.RS256, keys.rsa, "rsa", with(map[string]any{
		"client_id": " svc ", "scp": []string{"b", "a"}, "sub": "ignored"})), t0)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Principal != "svc" || strings.Join(tok.Scope, " ") != "a b" ||
		!tok.Expiry.Equal(t0.Add(time.Hour)) || !tok.IssuedAt.Equal(t0) {
		t.Fatalf("token %+v", tok)
	}
	// With no expected audience, a token naming one is refused (jose4j).
	_, err = v.Validate(signJWT(t, jose.RS256, keys.rsa, "rsa", with(map[string]any{"client_id": "svc", "aud": "kafka"})), t0)
	var te *TokenError
	if !errors.As(err, &te) || te.Status != "invalid_token" {
		t.Fatalf("aud without expectation: %v", err)
	}
	// Skew 0: expiry is exact to the second.
	exp := map[string]any{"client_id": "svc", "exp": t0.Unix()}
	if _, err := v.Validate(signJWT(t, jose.RS256, keys.rsa, "rsa", with(exp)), t0.Add(-time.Second)); err != nil {
		t.Fatalf("a second before exp: %v", err)
	}
	if _, err := v.Validate(signJWT(t, jose.RS256, keys.rsa, "rsa", with(exp)), t0); err == nil {
		t.Fatal("accepted at exp")
	}
	for _, bad := range []string{"", "a.b", "a..c", "a.b.c.d", "not a token", " . . "} {
		if _, err := v.Validate(bad, t0); !errors.As(err, &te) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestNewJWTValidatorConfig(t *testing.T) {
	if _, err := NewJWTValidator(JWTValidatorConfig{}); err == nil {
		t.Fatal("no key set accepted")
	}
	if _, err := NewJWTValidator(JWTValidatorConfig{Keys: JWKS{}, ClockSkew: -time.Second}); err == nil {
		t.Fatal("negative skew accepted")
	}
	for _, bad := range []string{"", "{", "[]", `{"keys":{}}`} {
		if _, err := ParseJWKS([]byte(bad)); err == nil {
			t.Errorf("JWKS %q parsed", bad)
		}
	}
	set, err := ParseJWKS([]byte(`{"keys":[]}`))
	if err != nil || len(set) != 0 {
		t.Fatalf("%v %v", set, err)
	}
}

// TestParseJWKSKeepsPublicKeys checks that a JWKS carrying a private key
// (a misconfiguration) yields only its public half.
func TestParseJWKSKeepsPublicKeys(t *testing.T) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: priv, KeyID: "p"}}})
	if err != nil {
		t.Fatal(err)
	}
	set, err := ParseJWKS(raw)
	if err != nil || len(set) != 1 {
		t.Fatalf("%v %v", set, err)
	}
	if _, ok := set[0].Key.(*ecdsa.PublicKey); !ok {
		t.Fatalf("key %T", set[0].Key)
	}
	var _ crypto.PublicKey = set[0].Key
}
