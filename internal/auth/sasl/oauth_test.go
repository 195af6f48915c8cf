package sasl

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sasl/oauth"

	"github.com/sluice-io/sluice/internal/auth"
)

// unsecuredJWT builds header.claims. as Kafka's unsecured login module does.
func unsecuredJWT(t testing.TB, header, claims map[string]any) string {
	t.Helper()
	enc := func(v map[string]any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(header) + "." + enc(claims) + "."
}

func unsecuredValidator(t testing.TB, options string) *UnsecuredValidator {
	t.Helper()
	e, err := ParseServerJAASConfig(OAuthBearerLoginModule + " required " + options + ";")
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewUnsecuredValidator(e)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestOAuthBearerUnsecuredFranzGo(t *testing.T) {
	v := unsecuredValidator(t, `unsecuredLoginStringClaim_sub="alice" unsecuredValidatorRequiredScope="LOGIN_TO_KAFKA" unsecuredValidatorAllowableClockSkewMs="3000"`)
	none := map[string]any{"alg": "none"}
	sec := func(d time.Duration) float64 { return float64(t0.Add(d).UnixMilli()) / 1000 }
	claims := func(extra map[string]any) map[string]any {
		c := map[string]any{"sub": "alice", "iat": sec(-time.Minute), "exp": sec(time.Hour), "scope": []string{"LOGIN_TO_KAFKA", "other"}}
		for k, v := range extra {
			if v == nil {
				delete(c, k)
			} else {
				c[k] = v
			}
		}
		return c
	}
	const invalid = `{"status":"invalid_token"}`
	cases := []struct {
		name    string
		token   string
		zid     string
		wantErr string // the client's error message; "" succeeds
	}{
		{name: "valid", token: unsecuredJWT(t, none, claims(nil))},
		{name: "scope as a string", token: unsecuredJWT(t, none, claims(map[string]any{"scope": " LOGIN_TO_KAFKA "}))},
		{name: "no iat", token: unsecuredJWT(t, none, claims(map[string]any{"iat": nil}))},
		{name: "expired within the skew", token: unsecuredJWT(t, none, claims(map[string]any{"exp": sec(-2 * time.Second)}))},
		{name: "authzid equal to sub", token: unsecuredJWT(t, none, claims(nil)), zid: "alice"},
		{name: "expired", token: unsecuredJWT(t, none, claims(map[string]any{"exp": sec(-3 * time.Second)})), wantErr: invalid},
		{name: "issued in the future", token: unsecuredJWT(t, none, claims(map[string]any{"iat": sec(4 * time.Second)})), wantErr: invalid},
		{name: "exp before iat", token: unsecuredJWT(t, none, claims(map[string]any{"iat": sec(2 * time.Second), "exp": sec(time.Second)})), wantErr: invalid},
		{name: "no exp", token: unsecuredJWT(t, none, claims(map[string]any{"exp": nil})), wantErr: invalid},
		{name: "exp not a number", token: unsecuredJWT(t, none, claims(map[string]any{"exp": "soon"})), wantErr: invalid},
		{name: "no sub", token: unsecuredJWT(t, none, claims(map[string]any{"sub": nil})), wantErr: invalid},
		{name: "blank sub", token: unsecuredJWT(t, none, claims(map[string]any{"sub": "  "})), wantErr: invalid},
		{name: "scope a number", token: unsecuredJWT(t, none, claims(map[string]any{"scope": 5})), wantErr: invalid},
		{name: "missing scope", token: unsecuredJWT(t, none, claims(map[string]any{"scope": []string{"other"}})),
			wantErr: `{"status":"insufficient_scope", "scope":"[LOGIN_TO_KAFKA]"}`},
		{name: "signed", token: unsecuredJWT(t, map[string]any{"alg": "RS256"}, claims(nil)) + "c2ln", wantErr: invalid},
		{name: "alg none with a signature", token: unsecuredJWT(t, none, claims(nil)) + "c2ln", wantErr: invalid},
		{name: "no alg", token: unsecuredJWT(t, map[string]any{"typ": "JWT"}, claims(nil)), wantErr: invalid},
		{name: "two sections", token: strings.TrimSuffix(unsecuredJWT(t, none, claims(nil)), "."), wantErr: invalid},
		{name: "bad base64", token: "e30.e~30.", wantErr: invalid},
		{name: "claims not JSON", token: "e30." + base64.RawURLEncoding.EncodeToString([]byte("[1]")) + ".", wantErr: invalid},
		{name: "other authzid", token: unsecuredJWT(t, none, claims(nil)), zid: "admin",
			wantErr: "Authentication failed: Client requested an authorization id (admin) that is different from the token's principal name (alice)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := NewOAuthBearerServer(v)
			client := oauth.Auth{Zid: c.zid, Token: c.token, Extensions: map[string]string{"traceId": "abc"}}.AsMechanism()
			r := exchange(t, client, srv, t0)
			if r.clientErr != nil {
				t.Fatalf("client error %v", r.clientErr)
			}
			if c.wantErr == "" {
				if r.serverErr != nil || srv.Principal() != auth.User("alice") {
					t.Fatalf("refused: %v", r.serverErr)
				}
				return
			}
			wantRefused(t, r.serverErr, OAuthBearer, c.wantErr)
			if strings.Contains(r.serverErr.Error(), c.token) {
				t.Fatalf("error %q shows the token", r.serverErr)
			}
			if !srv.Principal().IsZero() {
				t.Fatalf("principal %v", srv.Principal())
			}
		})
	}
}

func TestOAuthBearerErrorFlowAndLifetime(t *testing.T) {
	v := unsecuredValidator(t, "")
	exp := t0.Add(90 * time.Second)
	good := unsecuredJWT(t, map[string]any{"alg": "none"}, map[string]any{"sub": "bob", "exp": float64(exp.Unix())})
	expired := unsecuredJWT(t, map[string]any{"alg": "none"}, map[string]any{"sub": "bob", "exp": float64(t0.Unix())})
	msg := func(tok string) []byte { return []byte("n,,\x01auth=Bearer " + tok + "\x01\x01") }

	srv := NewOAuthBearerServer(v)
	resp, done, err := srv.Step(msg(expired), t0)
	if err != nil || done || string(resp) != `{"status":"invalid_token"}` {
		t.Fatalf("expired token: %q done %v err %v", resp, done, err)
	}
	// Another initial response instead of %x01 starts over, as in Kafka.
	resp, done, err = srv.Step(msg(good), t0)
	if err != nil || !done || len(resp) != 0 {
		t.Fatalf("retry: %q done %v err %v", resp, done, err)
	}
	if srv.Principal() != auth.User("bob") {
		t.Fatalf("principal %v", srv.Principal())
	}
	if d, bounded := srv.SessionLifetime(); !bounded || d != 90*time.Second {
		t.Fatalf("lifetime %v bounded %v", d, bounded)
	}
	for _, c := range []struct {
		maxReauth, want time.Duration
	}{{0, 90 * time.Second}, {time.Minute, time.Minute}, {time.Hour, 90 * time.Second}} {
		if d, bounded := SessionLifetime(srv, c.maxReauth); !bounded || d != c.want {
			t.Fatalf("SessionLifetime(max %v) = %v %v, want %v", c.maxReauth, d, bounded, c.want)
		}
	}
	if _, _, err := srv.Step([]byte{1}, t0); err == nil {
		t.Fatal("a completed exchange accepted another message")
	}

	// %x01 with no error sent is a malformed message.
	srv = NewOAuthBearerServer(v)
	if _, _, err := srv.Step([]byte{1}, t0); err == nil {
		t.Fatal("a lone 0x01 accepted as a first message")
	}
}

func TestSessionLifetimeWithoutCredentialBound(t *testing.T) {
	srv := NewPlainServer(&PlainUsers{})
	if _, bounded := SessionLifetime(srv, 0); bounded {
		t.Fatal("bounded without connections.max.reauth.ms")
	}
	if d, bounded := SessionLifetime(srv, time.Minute); !bounded || d != time.Minute {
		t.Fatalf("%v %v", d, bounded)
	}
}

func TestOAuthBearerInitialResponse(t *testing.T) {
	tok := "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0."
	good := []string{
		"n,,\x01auth=Bearer " + tok + "\x01\x01",
		"n,,\x01auth=bearer  " + tok + "\x01\x01",
		"n,a=alice,\x01auth=Bearer " + tok + "\x01\x01",
		"n,,\x01a=1\x01auth=Bearer " + tok + "\x01b=x y\x01\x01",
		"n,,\x01auth=Bearer abc-_~+/.==\x01\x01",
	}
	for _, m := range good {
		r, err := parseOAuthInitialResponse(m)
		if err != nil || r.token == "" {
			t.Errorf("%q: %+v %v", m, r, err)
		}
	}
	bad := []string{
		"",
		"n,,auth=Bearer " + tok,
		"y,,\x01auth=Bearer " + tok + "\x01\x01",
		"n,,\x01auth=Bearer " + tok + "\x01",
		"n,,\x01\x01",
		"n,,\x01auth=Basic dXNlcjpwYXNz\x01\x01",
		"n,,\x01auth=Bearer\x01\x01",
		"n,,\x01auth=Bearer a b\x01\x01",
		"n,,\x01auth=Bearer " + tok + "\x011x=y\x01\x01",
		"n,,\x01auth=Bearer " + tok + "\x01k=\x01\x01",
		"n,,\x01auth=Bearer " + tok + "\x01k\x01\x01",
		"n,a=,\x01auth=Bearer " + tok + "\x01\x01",
		"n,,\x01auth=Bearer " + tok + "\x01k=\xff\x01\x01",
	}
	for _, m := range bad {
		if r, err := parseOAuthInitialResponse(m); err == nil {
			t.Errorf("%q parsed: %+v", m, r)
		}
		srv := NewOAuthBearerServer(unsecuredValidator(t, ""))
		_, _, err := srv.Step([]byte(m), t0)
		wantRefused(t, err, OAuthBearer, "")
	}
	r, _ := parseOAuthInitialResponse(good[3])
	if r.extensions["a"] != "1" || r.extensions["b"] != "x y" || len(r.extensions) != 2 {
		t.Fatalf("extensions %v", r.extensions)
	}
}

type failingValidator struct{}

func (failingValidator) Validate(string, time.Time) (Token, error) {
	return Token{}, errors.New("JWKS not loaded")
}

func TestOAuthBearerValidatorFailure(t *testing.T) {
	srv := NewOAuthBearerServer(failingValidator{})
	_, _, err := srv.Step([]byte("n,,\x01auth=Bearer x.y.z\x01\x01"), t0)
	wantRefused(t, err, OAuthBearer, "")
}

func TestNewUnsecuredValidatorOptions(t *testing.T) {
	for _, opts := range []string{
		`unsecuredValidatorAllowableClockSkewMs="-1"`,
		`unsecuredValidatorAllowableClockSkewMs="soon"`,
		`unsecuredValidatorRequiredScope="a\"b"`,
	} {
		e, err := ParseServerJAASConfig(OAuthBearerLoginModule + " required " + opts + ";")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewUnsecuredValidator(e); err == nil {
			t.Errorf("%s accepted", opts)
		}
	}
	v := unsecuredValidator(t, `unsecuredValidatorPrincipalClaimName="user" unsecuredValidatorScopeClaimName="scp" unsecuredValidatorRequiredScope=" a  b "`)
	tok := unsecuredJWT(t, map[string]any{"alg": "none"}, map[string]any{
		"user": "carol", "scp": []any{"b", "a", " ", 7}, "exp": float64(t0.Add(time.Minute).Unix()), "iat": float64(t0.Unix())})
	got, err := v.Validate(tok, t0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Principal != "carol" || strings.Join(got.Scope, ",") != "7,a,b" || !got.IssuedAt.Equal(t0) {
		t.Fatalf("token %+v", got)
	}
}

func TestConfigNewServer(t *testing.T) {
	c := Config{PlainUsers: &PlainUsers{}, Scram: memStore{}, Tokens: unsecuredValidator(t, "")}
	for _, m := range []Mechanism{Plain, ScramSHA256, ScramSHA512, OAuthBearer} {
		s, err := c.NewServer(m)
		if err != nil || s.Mechanism() != m {
			t.Fatalf("%s: %v", m, err)
		}
	}
	for _, m := range []Mechanism{"GSSAPI", "plain", ""} {
		if _, err := c.NewServer(m); err == nil {
			t.Fatalf("%q served", m)
		}
	}
	if _, err := (Config{}).NewServer(Plain); err == nil {
		t.Fatal("PLAIN served without users")
	}
}
