package sasl

import (
	"bytes"
	"context"
	"encoding/base64"
	"hash"
	"regexp"
	"strings"
	"testing"

	kgosasl "github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/sluice-io/sluice/internal/auth"
)

// TestScramRFC7677 replays RFC 7677 section 3's SCRAM-SHA-256 exchange
// (also Kafka's ScramFormatterTest.rfc7677Example) against the server.
func TestScramRFC7677(t *testing.T) {
	salt, _ := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	salted, err := SaltedPassword(ScramSHA256, "pencil", salt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	cred, err := CredentialFromSaltedPassword(ScramSHA256, salt, salted, 4096)
	if err != nil {
		t.Fatal(err)
	}
	store := memStore{ScramSHA256: {"user": cred}}
	srv := &scramServer{mech: ScramSHA256, hash: mustHash(t, ScramSHA256), store: store,
		nonce: func() (string, error) { return "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0", nil }}

	s1, done, err := srv.Step([]byte("n,,n=user,r=rOprNGfwEbeRWgbNEkqO"), t0)
	if err != nil || done {
		t.Fatalf("first: done %v err %v", done, err)
	}
	if want := "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"; string(s1) != want {
		t.Fatalf("server-first %q, want %q", s1, want)
	}
	s2, done, err := srv.Step([]byte("c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="), t0)
	if err != nil || !done {
		t.Fatalf("final: done %v err %v", done, err)
	}
	if want := "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="; string(s2) != want {
		t.Fatalf("server-final %q, want %q", s2, want)
	}
	if srv.Principal() != auth.User("user") {
		t.Fatalf("principal %v", srv.Principal())
	}
}

func mustHash(t testing.TB, m Mechanism) func() hash.Hash {
	t.Helper()
	h, err := scramHash(m)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func scramStore(t testing.TB) memStore {
	s := memStore{}
	for _, m := range []Mechanism{ScramSHA256, ScramSHA512} {
		s.add(t, m, "alice", "alice-secret", 4096)
		s.add(t, m, "we,ird=name", "odd-secret", 8192)
	}
	s.add(t, ScramSHA256, "only256", "secret", 4096)
	s.add(t, ScramSHA256, "weak", "secret", 4095)
	return s
}

func scramClient(m Mechanism, a scram.Auth) kgosasl.Mechanism {
	if m == ScramSHA512 {
		return a.AsSha512Mechanism()
	}
	return a.AsSha256Mechanism()
}

func TestScramFranzGo(t *testing.T) {
	store := scramStore(t)
	const authzMismatch = "Authentication failed: Client requested an authorization id that is different from username"
	cases := []struct {
		name       string
		auth       scram.Auth
		mechs      []Mechanism
		failStep   int    // 0: succeeds
		wantClient string // the refusal's client message
	}{
		{name: "alice", auth: scram.Auth{User: "alice", Pass: "alice-secret"}},
		{name: "escaped name", auth: scram.Auth{User: "we,ird=name", Pass: "odd-secret"}},
		{name: "authzid equal to user", auth: scram.Auth{Zid: "we,ird=name", User: "we,ird=name", Pass: "odd-secret"}},
		{name: "wrong password", auth: scram.Auth{User: "alice", Pass: "alice-secreT"}, failStep: 2},
		{name: "unknown user", auth: scram.Auth{User: "mallory", Pass: "alice-secret"}, failStep: 1},
		{name: "other authzid", auth: scram.Auth{Zid: "admin", User: "alice", Pass: "alice-secret"}, failStep: 1, wantClient: authzMismatch},
		{name: "delegation token", auth: scram.Auth{User: "tokenid", Pass: "hmac", IsToken: true}, failStep: 1},
		{name: "credential of the other mechanism", auth: scram.Auth{User: "only256", Pass: "secret"}, mechs: []Mechanism{ScramSHA512}, failStep: 1},
		{name: "too few iterations", auth: scram.Auth{User: "weak", Pass: "secret"}, mechs: []Mechanism{ScramSHA256}, failStep: 1},
	}
	for _, c := range cases {
		mechs := c.mechs
		if mechs == nil {
			mechs = []Mechanism{ScramSHA256, ScramSHA512}
		}
		for _, m := range mechs {
			t.Run(string(m)+"/"+c.name, func(t *testing.T) {
				srv, err := NewScramServer(m, store, nil)
				if err != nil {
					t.Fatal(err)
				}
				r := exchange(t, scramClient(m, c.auth), srv, t0)
				if r.clientErr != nil {
					t.Fatalf("the client refused the server: %v", r.clientErr)
				}
				if c.failStep == 0 {
					if r.serverErr != nil || r.steps != 2 || srv.Principal() != auth.User(c.auth.User) {
						t.Fatalf("result %+v principal %v", r, srv.Principal())
					}
					return
				}
				if r.steps != c.failStep {
					t.Fatalf("failed at step %d, want %d: %v", r.steps, c.failStep, r.serverErr)
				}
				wantRefused(t, r.serverErr, m, c.wantClient)
				if strings.Contains(r.serverErr.Error(), c.auth.Pass) || !srv.Principal().IsZero() {
					t.Fatalf("error %q, principal %v", r.serverErr, srv.Principal())
				}
			})
		}
	}
}

// clientFinalFor runs franz-go's client through the server's first answer
// and returns its client-final message.
func clientFinalFor(t *testing.T, srv Server, a scram.Auth) []byte {
	t.Helper()
	session, first, err := a.AsSha256Mechanism().Authenticate(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	sf, _, err := srv.Step(first, t0)
	if err != nil {
		t.Fatal(err)
	}
	_, final, err := session.Challenge(sf)
	if err != nil {
		t.Fatal(err)
	}
	return final
}

func TestScramFinalMessageChecks(t *testing.T) {
	store := scramStore(t)
	alice := scram.Auth{User: "alice", Pass: "alice-secret", Nonce: []byte("fixed client nonce")}
	newServer := func() Server {
		srv, err := NewScramServer(ScramSHA256, store, nil)
		if err != nil {
			t.Fatal(err)
		}
		return srv
	}
	proofRE := regexp.MustCompile(`,p=(.*)$`)

	cases := []struct {
		name   string
		tamper func(final []byte) []byte
	}{
		{"bad proof", func(f []byte) []byte {
			proof, _ := base64.StdEncoding.DecodeString(string(proofRE.FindSubmatch(f)[1]))
			proof[0] ^= 1
			return proofRE.ReplaceAll(f, []byte(",p="+base64.StdEncoding.EncodeToString(proof)))
		}},
		{"short proof", func(f []byte) []byte { return proofRE.ReplaceAll(f, []byte(",p=AAAA")) }},
		{"proof not base64", func(f []byte) []byte { return proofRE.ReplaceAll(f, []byte(",p=!!!!")) }},
		{"nonce changed", func(f []byte) []byte { return bytes.Replace(f, []byte(",r="), []byte(",r=x"), 1) }},
		{"channel binding of another header", func(f []byte) []byte {
			return bytes.Replace(f, []byte("c=biws"), []byte("c="+base64.StdEncoding.EncodeToString([]byte("n,a=alice,"))), 1)
		}},
		{"channel binding requested", func(f []byte) []byte {
			return bytes.Replace(f, []byte("c=biws"), []byte("c="+base64.StdEncoding.EncodeToString([]byte("p=tls-unique,,"))), 1)
		}},
		{"extension inserted (proof no longer covers)", func(f []byte) []byte {
			return bytes.Replace(f, []byte(",p="), []byte(",x=y,p="), 1)
		}},
		{"no proof", func(f []byte) []byte { return proofRE.ReplaceAll(f, nil) }},
		{"garbage", func([]byte) []byte { return []byte("\xff\xfe") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newServer()
			final := c.tamper(clientFinalFor(t, srv, alice))
			_, done, err := srv.Step(final, t0)
			if done || err == nil {
				t.Fatalf("tampered final %q accepted", final)
			}
			t.Logf("refused: %v", err)
			wantRefused(t, err, ScramSHA256, "")
			if _, _, err := srv.Step(final, t0); err == nil {
				t.Fatal("the failed exchange accepted another message")
			}
		})
	}

	// A replayed client-final, recorded from a successful exchange with
	// the same client nonce, fails against a new server nonce.
	srv := newServer()
	recorded := clientFinalFor(t, srv, alice)
	if _, done, err := srv.Step(recorded, t0); !done || err != nil {
		t.Fatalf("original exchange: done %v err %v", done, err)
	}
	replay := newServer()
	first := []byte("n,,n=alice,r=" + base64.RawStdEncoding.EncodeToString(alice.Nonce))
	if _, _, err := replay.Step(first, t0); err != nil {
		t.Fatal(err)
	}
	if _, done, err := replay.Step(recorded, t0); done || err == nil {
		t.Fatal("a replayed client-final message was accepted")
	}
	if _, _, err := srv.Step(recorded, t0); err == nil {
		t.Fatal("a completed exchange accepted another message")
	}
}

func TestScramClientFirstMalformed(t *testing.T) {
	store := scramStore(t)
	for _, msg := range []string{
		"",
		"n,,",
		"y,,n=alice,r=abc",                // channel binding supported by client: refused, as Kafka
		"p=tls-unique,,n=alice,r=abc",     // channel binding requested
		"n,a=,n=alice,r=abc",              // empty authzid
		"n,,n=,r=abc",                     // empty name
		"n,,n=al=ice,r=abc",               // bad escape
		"n,,n=alice",                      // no nonce
		"n,,r=abc,n=alice",                // order
		"n,,n=alice,r=",                   // empty nonce
		"n,,n=alice,r=a b",                // nonce not printable
		"n,,n=alice,r=abc,1=x",            // extension name not alpha
		"n,,n=alice,r=abc,ext",            // extension without value
		"n,,n=al\xc3\xafce,r=abc",         // non-ASCII name, as Kafka's pattern
		"n,,m=,n=alice,r=abc",             // empty reserved-mext
		"n,,n=alice,r=abc,tokenauth=TRUE", // delegation token
	} {
		srv, _ := NewScramServer(ScramSHA256, store, nil)
		if resp, _, err := srv.Step([]byte(msg), t0); err == nil {
			t.Errorf("client-first %q answered %q", msg, resp)
		}
	}
	// Reserved-mext and unknown extensions are allowed, as by Kafka.
	for _, msg := range []string{"n,,m=x,n=alice,r=abc", "n,,n=alice,r=abc,foo=bar", "n,,n=alice,r=abc,tokenauth=false"} {
		srv, _ := NewScramServer(ScramSHA256, store, nil)
		if _, _, err := srv.Step([]byte(msg), t0); err != nil {
			t.Errorf("client-first %q: %v", msg, err)
		}
	}
}

func TestScramServerNonce(t *testing.T) {
	store := scramStore(t)
	seen := map[string]bool{}
	for range 20 {
		srv, _ := NewScramServer(ScramSHA256, store, nil)
		sf, _, err := srv.Step([]byte("n,,n=alice,r=abc"), t0)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`^r=abc([0-9a-z]+),s=[A-Za-z0-9+/=]+,i=4096$`).FindSubmatch(sf)
		if m == nil {
			t.Fatalf("server-first %q", sf)
		}
		if seen[string(m[1])] {
			t.Fatalf("server nonce %q repeated", m[1])
		}
		seen[string(m[1])] = true
	}
	// 130 bits of all ones is the largest nonce.
	n, err := scramNonce(bytes.NewReader(bytes.Repeat([]byte{0xff}, 17)))
	if err != nil || n != "1omfro7zwmumr3umxudzyj6scf" {
		t.Fatalf("nonce %q err %v", n, err)
	}
	if _, err := scramNonce(bytes.NewReader(nil)); err == nil {
		t.Fatal("an empty random source gave a nonce")
	}
}

func TestScramCredentialHelpers(t *testing.T) {
	for _, m := range []Mechanism{ScramSHA256, ScramSHA512} {
		c, err := NewCredential(m, "pw", 4096, nil)
		if err != nil {
			t.Fatal(err)
		}
		h := mustHash(t, m)().Size()
		if len(c.Salt) != 32 || len(c.StoredKey) != h || len(c.ServerKey) != h || c.Iterations != 4096 {
			t.Fatalf("%s credential %+v", m, c)
		}
	}
	if Plain.IsScram() || OAuthBearer.IsScram() {
		t.Fatal("not SCRAM")
	}
	if _, err := NewCredential(Plain, "pw", 4096, nil); err == nil {
		t.Fatal("a PLAIN credential")
	}
	if _, err := SaltedPassword(ScramSHA256, "pw", nil, 0); err == nil {
		t.Fatal("0 iterations")
	}
	if _, err := NewScramServer(OAuthBearer, memStore{}, nil); err == nil {
		t.Fatal("a SCRAM server for OAUTHBEARER")
	}
}
