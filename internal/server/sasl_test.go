package server

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	kgosasl "github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/sluice-io/sluice/internal/api"
	"github.com/sluice-io/sluice/internal/auth"
	"github.com/sluice-io/sluice/internal/auth/sasl"
	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/testutil"
)

// scramStore is a CredentialStore of fixed credentials.
type scramStore map[string]sasl.Credential

func (s scramStore) ScramCredential(user string, m sasl.Mechanism) (sasl.Credential, bool) {
	c, ok := s[string(m)+"/"+user]
	return c, ok
}

func newSASLConfig(t *testing.T, delay time.Duration) *SASL {
	t.Helper()
	entry, err := sasl.ParseServerJAASConfig(`org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" user_bob="bob-secret";`)
	if err != nil {
		t.Fatal(err)
	}
	users, err := sasl.PlainUsersFromJAAS(entry)
	if err != nil {
		t.Fatal(err)
	}
	store := scramStore{}
	for _, m := range []sasl.Mechanism{sasl.ScramSHA256, sasl.ScramSHA512} {
		c, err := sasl.NewCredential(m, "carol-secret", 4096, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		store[string(m)+"/carol"] = c
	}
	tokens, err := sasl.NewUnsecuredValidator(sasl.JAASEntry{})
	if err != nil {
		t.Fatal(err)
	}
	return &SASL{
		Mechanisms:  []sasl.Mechanism{sasl.Plain, sasl.ScramSHA256, sasl.ScramSHA512, sasl.OAuthBearer},
		Config:      sasl.Config{PlainUsers: users, Scram: store, Tokens: tokens},
		FailedDelay: delay,
		MaxReauth:   map[sasl.Mechanism]time.Duration{},
	}
}

// startSASLServer serves one SASL_PLAINTEXT listener with the SASL
// handlers and a Metadata handler reporting the connection state.
func startSASLServer(t *testing.T, cfg *SASL, seen chan<- api.ConnState) *testServer {
	t.Helper()
	return startSASLServerWith(t, cfg, seen, nil)
}

func startSASLServerWith(t *testing.T, cfg *SASL, seen chan<- api.ConnState, mutate func(*Options)) *testServer {
	t.Helper()
	handlers := append(api.BrokerHandlers(api.BrokerDeps{}), metadataHandler(func(_ context.Context, req *api.Request) api.Response {
		if seen != nil {
			select {
			case seen <- *req.Conn:
			default:
			}
		}
		return api.Reply(req.Body.ResponseKind())
	}))
	return startServer(t, func(o *Options) {
		o.Listeners = []Listener{{Name: "SASL_PLAINTEXT", Address: "127.0.0.1:0", SecurityProtocol: auth.SASLPlaintext, SASL: cfg}}
		if mutate != nil {
			mutate(o)
		}
	}, handlers...)
}

func unsecuredToken(sub string, exp time.Time) string {
	enc := func(v map[string]any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(map[string]any{"alg": "none"}) + "." + enc(map[string]any{"sub": sub, "iat": time.Now().Unix() - 1, "exp": exp.Unix()}) + "."
}

// Each mechanism through franz-go: the handler sees the authenticated
// principal and the SASL protocol; successes are counted by mechanism.
func TestSASLMechanismsWithFranzGo(t *testing.T) {
	seen := make(chan api.ConnState, 1)
	ts := startSASLServer(t, newSASLConfig(t, 0), seen)
	for _, c := range []struct {
		mech kgosasl.Mechanism
		want auth.Principal
	}{
		{plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism(), auth.User("alice")},
		{scram.Auth{User: "carol", Pass: "carol-secret"}.AsSha256Mechanism(), auth.User("carol")},
		{scram.Auth{User: "carol", Pass: "carol-secret"}.AsSha512Mechanism(), auth.User("carol")},
		{oauth.Auth{Token: unsecuredToken("dave", time.Now().Add(time.Hour))}.AsMechanism(), auth.User("dave")},
	} {
		if err := metadataOver(t, ts.addr, kgo.SASL(c.mech)); err != nil {
			t.Fatalf("%s: %v", c.mech.Name(), err)
		}
		got := <-seen
		if got.Principal != c.want || got.SecurityProtocol != auth.SASLPlaintext {
			t.Errorf("%s: principal %v protocol %s, want %v", c.mech.Name(), got.Principal, got.SecurityProtocol, c.want)
		}
		if n := counterValue(t, ts.srv.metrics.sasl.authenticated.WithLabelValues("SASL_PLAINTEXT", c.mech.Name())); n != 1 {
			t.Errorf("%s: successes counted %v, want 1", c.mech.Name(), n)
		}
	}
}

// Wrong passwords, unknown users, an unknown mechanism and a bad token are
// refused with Kafka's errors after the failed-authentication delay, and
// counted; the connection then closes.
func TestSASLRefusals(t *testing.T) {
	const delay = 150 * time.Millisecond
	ts := startSASLServer(t, newSASLConfig(t, delay), nil)
	failed := func(mech, reason string) float64 {
		return counterValue(t, ts.srv.metrics.sasl.failed.WithLabelValues("SASL_PLAINTEXT", mech, reason))
	}
	for _, c := range []struct {
		name   string
		mech   kgosasl.Mechanism
		want   *kerr.Error
		label  string
		reason string
	}{
		{"wrong password", plain.Auth{User: "alice", Pass: "nope"}.AsMechanism(), kerr.SaslAuthenticationFailed, "PLAIN", saslReasonCredentials},
		{"unknown user", plain.Auth{User: "mallory", Pass: "x"}.AsMechanism(), kerr.SaslAuthenticationFailed, "PLAIN", saslReasonCredentials},
		{"scram wrong password", scram.Auth{User: "carol", Pass: "nope"}.AsSha256Mechanism(), kerr.SaslAuthenticationFailed, "SCRAM-SHA-256", saslReasonCredentials},
		{"scram unknown user", scram.Auth{User: "mallory", Pass: "x"}.AsSha512Mechanism(), kerr.SaslAuthenticationFailed, "SCRAM-SHA-512", saslReasonCredentials},
		{"expired token", oauth.Auth{Token: unsecuredToken("dave", time.Now().Add(-time.Hour))}.AsMechanism(), kerr.SaslAuthenticationFailed, "OAUTHBEARER", saslReasonCredentials},
		{"unknown mechanism", unknownMechanism{}, kerr.UnsupportedSaslMechanism, saslNoMechanism, saslReasonMechanism},
	} {
		before := failed(c.label, c.reason)
		start := time.Now()
		err := metadataOver(t, ts.addr, kgo.SASL(c.mech))
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err %v, want %v", c.name, err, c.want)
		}
		if took := time.Since(start); took < delay {
			t.Errorf("%s: refused after %v, before the %v delay", c.name, took, delay)
		}
		if n := failed(c.label, c.reason); n != before+1 {
			t.Errorf("%s: failures counted %v, want %v", c.name, n, before+1)
		}
	}
}

// unknownMechanism is a SASL mechanism the server does not enable.
type unknownMechanism struct{}

func (unknownMechanism) Name() string { return "GSSAPI" }
func (unknownMechanism) Authenticate(context.Context, string) (kgosasl.Session, []byte, error) {
	return nil, nil, errors.New("not reached")
}

// The wrong password's message is Kafka's generic one for PLAIN.
func TestSASLWrongPasswordMessage(t *testing.T) {
	ts := startSASLServer(t, newSASLConfig(t, 0), nil)
	c := dial(t, ts.addr)
	handshake(t, c, "PLAIN")
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.SASLAuthBytes = []byte("\x00alice\x00wrong")
	send(t, c, auth, 2, 2)
	_, body := readResponse(t, c, true)
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	resp.SetVersion(2)
	if err := resp.ReadFrom(body); err != nil {
		t.Fatal(err)
	}
	want := "Authentication failed: Invalid username or password"
	if resp.ErrorCode != kerr.SaslAuthenticationFailed.Code || resp.ErrorMessage == nil || *resp.ErrorMessage != want {
		t.Fatalf("answer %d %v, want SASL_AUTHENTICATION_FAILED %q", resp.ErrorCode, resp.ErrorMessage, want)
	}
	expectClosed(t, c)
}

func handshake(t *testing.T, c net.Conn, mech string) {
	t.Helper()
	req := kmsg.NewPtrSASLHandshakeRequest()
	req.Mechanism = mech
	send(t, c, req, 1, 1)
	_, body := readResponse(t, c, false)
	resp := kmsg.NewPtrSASLHandshakeResponse()
	resp.SetVersion(1)
	if err := resp.ReadFrom(body); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("handshake: %v, code %d", err, resp.ErrorCode)
	}
}

// Requests out of turn close the connection and are counted: Metadata
// before authentication, SaslAuthenticate before SaslHandshake, Metadata
// between SaslHandshake and SaslAuthenticate. ApiVersions is answered.
func TestSASLRequestsOutOfTurnCloseTheConnection(t *testing.T) {
	ts := startSASLServer(t, newSASLConfig(t, 0), nil)
	illegal := func() float64 {
		return counterValue(t, ts.srv.metrics.sasl.failed.WithLabelValues("SASL_PLAINTEXT", saslNoMechanism, saslReasonIllegalState))
	}

	c := dial(t, ts.addr)
	send(t, c, kmsg.NewPtrApiVersionsRequest(), 3, 1)
	readResponse(t, c, false)
	send(t, c, kmsg.NewPtrMetadataRequest(), 12, 2)
	expectClosed(t, c)

	c = dial(t, ts.addr)
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.SASLAuthBytes = []byte("\x00alice\x00alice-secret")
	send(t, c, auth, 2, 1)
	expectClosed(t, c)
	if n := illegal(); n != 2 {
		t.Errorf("illegal-state failures %v, want 2", n)
	}

	c = dial(t, ts.addr)
	handshake(t, c, "PLAIN")
	send(t, c, kmsg.NewPtrMetadataRequest(), 12, 2)
	expectClosed(t, c)
	if n := counterValue(t, ts.srv.metrics.sasl.failed.WithLabelValues("SASL_PLAINTEXT", "PLAIN", saslReasonIllegalState)); n != 1 {
		t.Errorf("illegal-state failures after the handshake %v, want 1", n)
	}
}

// A frame above sasl.server.max.receive.size before authentication, and
// one cut off, close the connection and are counted; once authenticated,
// frames up to socket.request.max.bytes are read.
func TestSASLFrameLimits(t *testing.T) {
	cfg := newSASLConfig(t, 0)
	cfg.MaxReceiveSize = 1024
	ts := startSASLServer(t, cfg, nil)
	failed := func(mech, reason string) float64 {
		return counterValue(t, ts.srv.metrics.sasl.failed.WithLabelValues("SASL_PLAINTEXT", mech, reason))
	}

	c := dial(t, ts.addr)
	handshake(t, c, "PLAIN")
	big := kmsg.NewPtrSASLAuthenticateRequest()
	big.SASLAuthBytes = make([]byte, 2000)
	send(t, c, big, 2, 2)
	expectClosed(t, c)
	if n := failed("PLAIN", saslReasonFrameTooLarge); n != 1 {
		t.Errorf("oversized frames counted %v, want 1", n)
	}

	c = dial(t, ts.addr)
	handshake(t, c, "PLAIN")
	var frame [4]byte
	binary.BigEndian.PutUint32(frame[:], 100)
	c.Write(append(frame[:], 0, 36, 0, 2))
	c.(interface{ CloseWrite() error }).CloseWrite()
	testutil.Eventually(t, 5*time.Second, func() bool { return failed("PLAIN", saslReasonTruncated) == 1 }, "truncated frame counted")

	// A SaslAuthenticate whose auth_bytes claim more than the frame holds.
	c = dial(t, ts.addr)
	handshake(t, c, "PLAIN")
	bad := kmsg.NewPtrSASLAuthenticateRequest()
	bad.SASLAuthBytes = []byte("\x00alice\x00alice-secret")
	bad.SetVersion(1)
	b := kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw")).AppendRequest(nil, bad, 2)
	b = b[:len(b)-5]
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	c.Write(b)
	expectClosed(t, c)
	if n := failed("PLAIN", saslReasonMalformed); n != 1 {
		t.Errorf("malformed requests counted %v, want 1", n)
	}

	seen := make(chan api.ConnState, 1)
	ts = startSASLServer(t, cfg, seen)
	cl, err := kgo.NewClient(kgo.SeedBrokers(ts.addr), kgo.RequestRetries(0), kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr(strings.Repeat("t", 4000))}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cl.Request(ctx, req); err != nil {
		t.Fatalf("a large request after authentication: %v", err)
	}
}

// With connections.max.reauth.ms small, franz-go re-authenticates on its
// own and keeps being served; a re-authentication as someone else is
// refused with Kafka's message and counted.
func TestSASLReauthentication(t *testing.T) {
	cfg := newSASLConfig(t, 0)
	cfg.MaxReauth[sasl.Plain] = 1500 * time.Millisecond
	ts := startSASLServer(t, cfg, nil)
	cl, err := kgo.NewClient(kgo.SeedBrokers(ts.addr), kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	reauths := func() float64 {
		return counterValue(t, ts.srv.metrics.sasl.reauthenticated.WithLabelValues("SASL_PLAINTEXT", "PLAIN"))
	}
	testutil.Eventually(t, 15*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := cl.Request(ctx, kmsg.NewPtrMetadataRequest()); err != nil {
			t.Fatalf("request on a re-authenticating connection: %v", err)
		}
		return reauths() >= 2
	}, "two re-authentications")
	if n := counterValue(t, ts.srv.metrics.sasl.expired.WithLabelValues("SASL_PLAINTEXT")); n != 0 {
		t.Errorf("expired sessions killed %v, want 0", n)
	}

	var calls atomic.Int32
	changing := plain.Plain(func(context.Context) (plain.Auth, error) {
		if calls.Add(1) == 1 {
			return plain.Auth{User: "alice", Pass: "alice-secret"}, nil
		}
		return plain.Auth{User: "bob", Pass: "bob-secret"}, nil
	})
	cl2, err := kgo.NewClient(kgo.SeedBrokers(ts.addr), kgo.RequestRetries(0), kgo.SASL(changing))
	if err != nil {
		t.Fatal(err)
	}
	defer cl2.Close()
	changed := func() float64 {
		return counterValue(t, ts.srv.metrics.sasl.reauthFailed.WithLabelValues("SASL_PLAINTEXT", "PLAIN", saslReasonPrincipalChange))
	}
	testutil.Eventually(t, 15*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		cl2.Request(ctx, kmsg.NewPtrMetadataRequest())
		return changed() == 1
	}, "a principal change refused")
}

// A session past its lifetime is closed on its next request other than a
// re-authentication (a client of SaslAuthenticate v0 cannot re-authenticate)
// and counted.
func TestSASLExpiredSessionIsClosed(t *testing.T) {
	cfg := newSASLConfig(t, 0)
	cfg.MaxReauth[sasl.Plain] = time.Minute
	clk := clock.NewManual(time.Now())
	ts := startSASLServerWith(t, cfg, nil, func(o *Options) { o.Clock = clk })
	c := dial(t, ts.addr)
	handshake(t, c, "PLAIN")
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.SASLAuthBytes = []byte("\x00alice\x00alice-secret")
	send(t, c, auth, 0, 2)
	_, body := readResponse(t, c, false)
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	if err := resp.ReadFrom(body); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("authenticate: %v, code %d", err, resp.ErrorCode)
	}
	send(t, c, kmsg.NewPtrMetadataRequest(), 12, 3)
	readResponse(t, c, true)
	if resp.SessionLifetimeMillis != 0 {
		t.Errorf("v0 answer carries session lifetime %d", resp.SessionLifetimeMillis)
	}
	clk.Advance(time.Minute + time.Millisecond)
	send(t, c, kmsg.NewPtrMetadataRequest(), 12, 4)
	expectClosed(t, c)
	if n := counterValue(t, ts.srv.metrics.sasl.expired.WithLabelValues("SASL_PLAINTEXT")); n != 1 {
		t.Errorf("expired sessions killed %v, want 1", n)
	}

	// A client of SaslAuthenticate v1+ may still re-authenticate once its
	// session ended (it does so when it next sends), and is then served.
	c = dial(t, ts.addr)
	authenticateV1 := func(corr int32) *kmsg.SASLAuthenticateResponse {
		t.Helper()
		handshake(t, c, "PLAIN")
		req := kmsg.NewPtrSASLAuthenticateRequest()
		req.SASLAuthBytes = []byte("\x00alice\x00alice-secret")
		send(t, c, req, 1, corr)
		_, body := readResponse(t, c, false)
		resp := kmsg.NewPtrSASLAuthenticateResponse()
		resp.SetVersion(1)
		if err := resp.ReadFrom(body); err != nil || resp.ErrorCode != 0 {
			t.Fatalf("authenticate v1: %v, code %d", err, resp.ErrorCode)
		}
		return resp
	}
	if r := authenticateV1(2); r.SessionLifetimeMillis != time.Minute.Milliseconds() {
		t.Errorf("session lifetime %d ms, want %d", r.SessionLifetimeMillis, time.Minute.Milliseconds())
	}
	clk.Advance(time.Minute + time.Millisecond)
	authenticateV1(3)
	send(t, c, kmsg.NewPtrMetadataRequest(), 12, 4)
	readResponse(t, c, true)
	if n := counterValue(t, ts.srv.metrics.sasl.reauthenticated.WithLabelValues("SASL_PLAINTEXT", "PLAIN")); n != 1 {
		t.Errorf("re-authentications %v, want 1", n)
	}
	if n := counterValue(t, ts.srv.metrics.sasl.expired.WithLabelValues("SASL_PLAINTEXT")); n != 1 {
		t.Errorf("expired sessions killed %v, want still 1", n)
	}
}

// On a SASL listener another protocol sharing the port (the raft RPC) is
// handed over only after authentication: its bytes before are a bad Kafka
// frame and close the connection.
func TestSASLListenerDivertsOnlyAuthenticated(t *testing.T) {
	prefix := []byte("\x00\x00\x00\x07RAFT")
	served := make(chan []byte, 2)
	divert := &Divert{PrefixLen: len(prefix), Match: func(b []byte) bool { return string(b) == string(prefix) },
		Serve: func(nc net.Conn, peeked []byte) {
			defer nc.Close()
			rest := make([]byte, 3)
			if _, err := io.ReadFull(nc, rest); err == nil {
				served <- append(peeked, rest...)
			}
		}}
	cfg := newSASLConfig(t, 0)
	handlers := api.BrokerHandlers(api.BrokerDeps{})
	ts := startServer(t, func(o *Options) {
		o.Listeners = []Listener{{Name: "CONTROLLER", Address: "127.0.0.1:0", SecurityProtocol: auth.SASLPlaintext, SASL: cfg, Divert: divert}}
	}, handlers...)

	c := dial(t, ts.addr)
	c.Write(append(prefix, "abc"...))
	expectClosed(t, c)

	c = dial(t, ts.addr)
	handshake(t, c, "PLAIN")
	au := kmsg.NewPtrSASLAuthenticateRequest()
	au.SASLAuthBytes = []byte("\x00alice\x00alice-secret")
	send(t, c, au, 1, 2)
	readResponse(t, c, false)
	c.Write(append(prefix, "abc"...))
	select {
	case got := <-served:
		if string(got) != string(prefix)+"abc" {
			t.Fatalf("diverted %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an authenticated connection was not diverted")
	}
	if len(served) != 0 {
		t.Fatal("the unauthenticated connection was diverted")
	}
}

// After SaslHandshake v0 the mechanism's messages are raw tokens framed by
// their size alone; success answers the same way and the connection is then
// served; a refused token closes it without an answer, counted.
func TestSASLHandshakeV0RawTokens(t *testing.T) {
	ts := startSASLServer(t, newSASLConfig(t, 0), nil)
	rawToken := func(c net.Conn, token string) {
		t.Helper()
		var size [4]byte
		binary.BigEndian.PutUint32(size[:], uint32(len(token)))
		if _, err := c.Write(append(size[:], token...)); err != nil {
			t.Fatal(err)
		}
	}
	handshakeV0 := func(c net.Conn) {
		t.Helper()
		req := kmsg.NewPtrSASLHandshakeRequest()
		req.Mechanism = "PLAIN"
		send(t, c, req, 0, 1)
		_, body := readResponse(t, c, false)
		resp := kmsg.NewPtrSASLHandshakeResponse()
		if err := resp.ReadFrom(body); err != nil || resp.ErrorCode != 0 {
			t.Fatalf("handshake v0: %v, code %d", err, resp.ErrorCode)
		}
	}
	c := dial(t, ts.addr)
	handshakeV0(c)
	rawToken(c, "\x00alice\x00alice-secret")
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil || binary.BigEndian.Uint32(size[:]) != 0 {
		t.Fatalf("raw answer: %v, size %d", err, binary.BigEndian.Uint32(size[:]))
	}
	send(t, c, kmsg.NewPtrMetadataRequest(), 12, 3)
	readResponse(t, c, true)
	if n := counterValue(t, ts.srv.metrics.sasl.authenticated.WithLabelValues("SASL_PLAINTEXT", "PLAIN")); n != 1 {
		t.Errorf("raw authentications counted %v, want 1", n)
	}

	c = dial(t, ts.addr)
	handshakeV0(c)
	rawToken(c, "\x00alice\x00wrong")
	expectClosed(t, c)
	if n := counterValue(t, ts.srv.metrics.sasl.failed.WithLabelValues("SASL_PLAINTEXT", "PLAIN", saslReasonCredentials)); n != 1 {
		t.Errorf("raw failures counted %v, want 1", n)
	}
}

// Before authentication an ApiVersions at a version the server does not
// serve gets KIP-511's answer and the client may ask again, as Kafka
// allows; a second ApiVersions after an answered one closes.
func TestSASLApiVersionsRetryBeforeHandshake(t *testing.T) {
	ts := startSASLServer(t, newSASLConfig(t, 0), nil)
	c := dial(t, ts.addr)
	send(t, c, kmsg.NewPtrApiVersionsRequest(), 99, 1)
	_, body := readResponse(t, c, false)
	resp := kmsg.NewPtrApiVersionsResponse()
	if err := resp.ReadFrom(body); err != nil || resp.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Fatalf("KIP-511 answer: %v, code %d", err, resp.ErrorCode)
	}
	send(t, c, kmsg.NewPtrApiVersionsRequest(), 3, 2)
	readResponse(t, c, false)
	handshake(t, c, "PLAIN")

	c = dial(t, ts.addr)
	send(t, c, kmsg.NewPtrApiVersionsRequest(), 3, 1)
	readResponse(t, c, false)
	send(t, c, kmsg.NewPtrApiVersionsRequest(), 3, 2)
	expectClosed(t, c)
}

// A re-authentication must keep the session's mechanism: the handshake for
// another one is answered, its first token closes the connection, counted.
func TestSASLReauthenticationWithAnotherMechanism(t *testing.T) {
	ts := startSASLServer(t, newSASLConfig(t, 0), nil)
	c := dial(t, ts.addr)
	handshake(t, c, "PLAIN")
	au := kmsg.NewPtrSASLAuthenticateRequest()
	au.SASLAuthBytes = []byte("\x00alice\x00alice-secret")
	send(t, c, au, 1, 2)
	readResponse(t, c, false)
	handshake(t, c, "SCRAM-SHA-256")
	au.SASLAuthBytes = []byte("n,,n=carol,r=abc")
	send(t, c, au, 1, 4)
	expectClosed(t, c)
	if n := counterValue(t, ts.srv.metrics.sasl.reauthFailed.WithLabelValues("SASL_PLAINTEXT", "PLAIN", saslReasonMechanismChange)); n != 1 {
		t.Errorf("mechanism changes counted %v, want 1", n)
	}
}
