package sasl

import (
	"context"
	"crypto/sha256"
	"errors"
	"slices"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/sluice-io/sluice/internal/auth"
)

// The fuzz targets feed arbitrary messages to each Server. Beyond not
// panicking, a refusal must be a *Error, and only the right credentials
// may authenticate, as alice.
//
//	go test -run '^$' -fuzz '^FuzzScramStep$' -fuzztime 10s -fuzzminimizetime 100x ./internal/auth/sasl
//
// (-fuzzminimizetime keeps the minimizing of long signed tokens from
// taking the run's time.)

func checkStep(t *testing.T, srv Server, done bool, err error) {
	t.Helper()
	var e *Error
	if err != nil && !errors.As(err, &e) {
		t.Fatalf("error %v is a %T, not a *sasl.Error", err, err)
	}
	if done && srv.Principal() != auth.User("alice") {
		t.Fatalf("authenticated as %v", srv.Principal())
	}
	if !done && !srv.Principal().IsZero() {
		t.Fatalf("principal %v before done", srv.Principal())
	}
}

func FuzzPlainStep(f *testing.F) {
	for _, s := range []string{"\x00alice\x00alice-secret", "alice\x00alice\x00alice-secret", "\x00alice\x00wrong",
		"\x00\x00", "", "\x00bob\x00bob-secret\x00", "\xff\x00alice\x00alice-secret"} {
		f.Add([]byte(s))
	}
	users := plainUsers(f)
	f.Fuzz(func(t *testing.T, msg []byte) {
		srv := NewPlainServer(users)
		_, done, err := srv.Step(msg, t0)
		checkStep(t, srv, done, err)
		if ok := string(msg) == "\x00alice\x00alice-secret" || string(msg) == "alice\x00alice\x00alice-secret"; done != ok {
			t.Fatalf("done %v for %q", done, msg)
		}
	})
}

// fixedNonceScram is a SCRAM-SHA-256 server whose nonce is fixed, so a
// recorded client-final message stays valid and seeds reach the proof.
func fixedNonceScram(store CredentialStore) *scramServer {
	return &scramServer{mech: ScramSHA256, hash: sha256.New, store: store,
		nonce: func() (string, error) { return "fixedservernonce", nil }}
}

func FuzzScramStep(f *testing.F) {
	store := memStore{}
	store.add(f, ScramSHA256, "alice", "alice-secret", 4096)
	// Record a genuine exchange to seed the corpus.
	session, first, err := scram.Auth{User: "alice", Pass: "alice-secret", Nonce: []byte("n0nce")}.
		AsSha256Mechanism().Authenticate(context.Background(), "")
	if err != nil {
		f.Fatal(err)
	}
	srv := fixedNonceScram(store)
	sf, _, err := srv.Step(first, t0)
	if err != nil {
		f.Fatal(err)
	}
	_, final, err := session.Challenge(sf)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(first, final)
	f.Add([]byte("n,a=alice,n=alice,r=abc,m=1"), []byte("c=biws,r=abcfixedservernonce,p=AAAA"))
	f.Add([]byte("n,,n=al=2Cice,r=x,tokenauth=true"), []byte("c=,r=,p="))
	f.Add([]byte("n,,m=ext,n=alice,r=x"), []byte("c=biws,r=xfixedservernonce,e=1,p=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="))
	f.Fuzz(func(t *testing.T, first, final []byte) {
		srv := fixedNonceScram(store)
		_, done, err := srv.Step(first, t0)
		checkStep(t, srv, done, err)
		if err != nil {
			return
		}
		if done {
			t.Fatal("done after the first message")
		}
		_, done, err = srv.Step(final, t0)
		checkStep(t, srv, done, err)
		if _, _, err := srv.Step(final, t0); err == nil {
			t.Fatal("a third message was accepted")
		}
	})
}

func FuzzOAuthBearerStep(f *testing.F) {
	keys := newJWTKeys(f)
	set, err := ParseJWKS(keys.jwks)
	if err != nil {
		f.Fatal(err)
	}
	jwtV, err := NewJWTValidator(JWTValidatorConfig{Keys: set, ExpectedAudience: []string{"kafka"}})
	if err != nil {
		f.Fatal(err)
	}
	unsecured := unsecuredValidator(f, "")
	claims := map[string]any{"sub": "alice", "aud": "kafka", "iat": t0.Unix(), "exp": t0.Add(time.Hour).Unix()}
	for _, tok := range []string{
		signJWT(f, jose.RS256, keys.rsa, "rsa", claims),
		signJWT(f, jose.ES256, keys.ec, "ec", claims),
		unsecuredJWT(f, map[string]any{"alg": "none"}, claims),
	} {
		f.Add([]byte("n,,\x01auth=Bearer "+tok+"\x01\x01"), []byte{1})
		f.Add([]byte("n,a=alice,\x01auth=bearer "+tok+"\x01k=v\x01\x01"), []byte("n,,\x01auth=Bearer "+tok+"\x01\x01"))
	}
	f.Add([]byte("n,,\x01auth=Bearer a.b.c\x01\x01"), []byte{1})
	f.Fuzz(func(t *testing.T, first, second []byte) {
		for _, v := range []TokenValidator{jwtV, unsecured} {
			srv := NewOAuthBearerServer(v)
			_, done, err := srv.Step(first, t0)
			checkStep(t, srv, done, err)
			if err != nil || done {
				continue
			}
			_, done, err = srv.Step(second, t0)
			checkStep(t, srv, done, err)
		}
	})
}

func FuzzParseJAASConfig(f *testing.F) {
	for _, s := range []string{
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret";`,
		"a required k='v\\n\\101' /* c */ k2=w; // x\nb optional;",
		`m required k=1.2.-;`, `"m" sufficient "k"="v";`, "m required k=\"unterminated\n;",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		entries, err := ParseJAASConfig(s)
		if err != nil {
			return
		}
		if len(entries) == 0 {
			t.Fatal("no entries and no error")
		}
		for _, e := range entries {
			if !slices.Contains([]string{"required", "requisite", "sufficient", "optional"}, e.Flag) || e.Options == nil {
				t.Fatalf("entry %+v", e)
			}
		}
	})
}
