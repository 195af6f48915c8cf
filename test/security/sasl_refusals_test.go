package security

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	kgosasl "github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/sluice-io/sluice/internal/testutil"
)

// metadataWith asks for Metadata through a client at its defaults
// authenticating with m (or as opts say when nil), without retries (a
// refusal is final).
func metadataWith(t *testing.T, addr string, m kgosasl.Mechanism, opts ...kgo.Opt) error {
	t.Helper()
	if m != nil {
		opts = append(opts, kgo.SASL(m))
	}
	cl := client(t, addr, append(opts, kgo.RequestRetries(0))...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := cl.Request(ctx, kmsg.NewPtrMetadataRequest())
	return err
}

// errAccepted is a login that should have been refused.
var errAccepted = errors.New("accepted")

// gssapi is a mechanism the server does not enable.
type gssapi struct{}

func (gssapi) Name() string { return "GSSAPI" }
func (gssapi) Authenticate(context.Context, string) (kgosasl.Session, []byte, error) {
	return nil, nil, errors.New("not reached")
}

// Bad input is refused with Kafka's error or a closed connection and
// counted: wrong passwords, unknown users, an unknown mechanism, invalid
// JWTs (bad signature, expired, wrong audience), SaslAuthenticate before
// SaslHandshake, Metadata before authentication, a truncated and an
// oversized SASL frame.
func TestSASLRefusesBadInput(t *testing.T) {
	s := startSASLServer(t, "sasl.server.max.receive.size=4096")
	s.addScramUser(t, "alice", alicePassword)
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tlsOpt := kgo.DialTLSConfig(s.sslTLS)
	hour := time.Now().Add(time.Hour)
	for _, c := range []struct {
		name, addr, listener, label string
		mech                        kgosasl.Mechanism
		want                        *kerr.Error
	}{
		{"PLAIN wrong password", s.saslAddr, "SASL_PLAINTEXT", "PLAIN", plain.Auth{User: "alice", Pass: "wrong"}.AsMechanism(), kerr.SaslAuthenticationFailed},
		{"PLAIN unknown user", s.saslAddr, "SASL_PLAINTEXT", "PLAIN", plain.Auth{User: "mallory", Pass: "x"}.AsMechanism(), kerr.SaslAuthenticationFailed},
		{"SCRAM wrong password", s.sslAddr, "SASL_SSL", "SCRAM-SHA-256", scram.Auth{User: "alice", Pass: "wrong"}.AsSha256Mechanism(), kerr.SaslAuthenticationFailed},
		{"SCRAM unknown user", s.saslAddr, "SASL_PLAINTEXT", "SCRAM-SHA-512", scram.Auth{User: "mallory", Pass: "x"}.AsSha512Mechanism(), kerr.SaslAuthenticationFailed},
		{"unknown mechanism", s.saslAddr, "SASL_PLAINTEXT", "none", gssapi{}, kerr.UnsupportedSaslMechanism},
		{"JWT bad signature", s.sslAddr, "SASL_SSL", "OAUTHBEARER", oauth.Auth{Token: s.issuer.token(t, "alice", hour, jwtAudience, other)}.AsMechanism(), kerr.SaslAuthenticationFailed},
		{"JWT expired", s.sslAddr, "SASL_SSL", "OAUTHBEARER", oauth.Auth{Token: s.issuer.token(t, "alice", time.Now().Add(-time.Hour), jwtAudience, nil)}.AsMechanism(), kerr.SaslAuthenticationFailed},
		{"JWT wrong audience", s.sslAddr, "SASL_SSL", "OAUTHBEARER", oauth.Auth{Token: s.issuer.token(t, "alice", hour, "someone-else", nil)}.AsMechanism(), kerr.SaslAuthenticationFailed},
		{"unsecured token on the JWT listener", s.sslAddr, "SASL_SSL", "OAUTHBEARER", oauth.Auth{Token: unsecuredJWT(t, "alice", hour)}.AsMechanism(), kerr.SaslAuthenticationFailed},
	} {
		reason := "credentials"
		if c.want == kerr.UnsupportedSaslMechanism {
			reason = "unsupported_mechanism"
		}
		labels := failedLabels(c.listener, c.label, reason)
		before := s.metric(t, "sluice_failed_authentication_total", labels)
		var opts []kgo.Opt
		if c.listener == "SASL_SSL" {
			opts = append(opts, tlsOpt)
		}
		if err := metadataWith(t, c.addr, c.mech, opts...); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if n := s.metric(t, "sluice_failed_authentication_total", labels); n != before+1 {
			t.Errorf("%s: failures counted %v, want %v", c.name, n, before+1)
		}
	}

	rawCases := []struct {
		name   string
		labels string
		send   func(nc net.Conn)
	}{
		{"SaslAuthenticate before SaslHandshake", failedLabels("SASL_PLAINTEXT", "none", "illegal_state"), func(nc net.Conn) {
			req := kmsg.NewPtrSASLAuthenticateRequest()
			req.SASLAuthBytes = []byte("\x00alice\x00" + alicePassword)
			writeRequest(t, nc, req, 1)
		}},
		{"Metadata before authentication", failedLabels("SASL_PLAINTEXT", "none", "illegal_state"), func(nc net.Conn) {
			writeRequest(t, nc, kmsg.NewPtrMetadataRequest(), 12)
		}},
		{"oversized SASL frame", failedLabels("SASL_PLAINTEXT", "PLAIN", "frame_too_large"), func(nc net.Conn) {
			rawHandshake(t, nc, "PLAIN")
			req := kmsg.NewPtrSASLAuthenticateRequest()
			req.SASLAuthBytes = make([]byte, 8192)
			writeRequest(t, nc, req, 2)
		}},
		{"truncated SASL frame", failedLabels("SASL_PLAINTEXT", "PLAIN", "truncated"), func(nc net.Conn) {
			rawHandshake(t, nc, "PLAIN")
			var frame [8]byte
			binary.BigEndian.PutUint32(frame[:], 200)
			copy(frame[4:], []byte{0, 36, 0, 2})
			nc.Write(frame[:])
			nc.(*net.TCPConn).CloseWrite()
		}},
	}
	for _, c := range rawCases {
		before := s.metric(t, "sluice_failed_authentication_total", c.labels)
		nc, err := net.DialTimeout("tcp", s.saslAddr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		c.send(nc)
		if err := expectEOF(nc); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		nc.Close()
		testutil.Eventually(t, 10*time.Second, func() bool {
			return s.metric(t, "sluice_failed_authentication_total", c.labels) == before+1
		}, "%s counted", c.name)
	}
}

func writeRequest(t *testing.T, nc net.Conn, req kmsg.Request, version int16) {
	t.Helper()
	req.SetVersion(version)
	if _, err := nc.Write(kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw")).AppendRequest(nil, req, 1)); err != nil {
		t.Fatal(err)
	}
}

// rawHandshake sends SaslHandshake v1 for mech and checks the answer.
func rawHandshake(t *testing.T, nc net.Conn, mech string) {
	t.Helper()
	req := kmsg.NewPtrSASLHandshakeRequest()
	req.Mechanism = mech
	writeRequest(t, nc, req, 1)
	var size [4]byte
	if _, err := readFull(nc, size[:]); err != nil {
		t.Fatalf("handshake answer: %v", err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := readFull(nc, body); err != nil {
		t.Fatalf("handshake answer: %v", err)
	}
	resp := kmsg.NewPtrSASLHandshakeResponse()
	resp.SetVersion(1)
	if err := resp.ReadFrom(body[4:]); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("handshake answer: %v, code %d", err, resp.ErrorCode)
	}
}

func readFull(nc net.Conn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := nc.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// expectEOF reads until the server closes the connection; a timeout means
// it kept it open.
func expectEOF(nc net.Conn) error {
	buf := make([]byte, 512)
	for {
		_, err := nc.Read(buf)
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return errors.New("connection still open")
		}
		return nil
	}
}

// Ten thousand failed logins (the failed-authentication delay low) leave
// the node serving authenticated clients, and every one is counted.
func TestTenThousandFailedLogins(t *testing.T) {
	s := startSASLServer(t, "connection.failed.authentication.delay.ms=1")
	const total, workers = 10000, 16
	labels := failedLabels("SASL_PLAINTEXT", "PLAIN", "credentials")
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < total; i += workers {
				if err := failLogin(s.saslAddr); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	testutil.Eventually(t, 30*time.Second, func() bool {
		return s.metric(t, "sluice_failed_authentication_total", labels) == total
	}, "%d failed logins counted", total)
	if err := produceAndConsume(t, s.saslAddr, "after-failures", 20, kgo.SASL(plain.Auth{User: "alice", Pass: alicePassword}.AsMechanism())); err != nil {
		t.Fatalf("an authenticated client after %d failed logins: %v", total, err)
	}
}

// failLogin sends a wrong PLAIN password and expects
// SASL_AUTHENTICATION_FAILED, then the close.
func failLogin(addr string) error {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, "PLAIN"
	au := kmsg.NewPtrSASLAuthenticateRequest()
	au.Version, au.SASLAuthBytes = 2, []byte("\x00alice\x00wrong")
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw"))
	// AppendRequest sizes the whole buffer: one frame each.
	if _, err := nc.Write(append(f.AppendRequest(nil, hs, 1), f.AppendRequest(nil, au, 2)...)); err != nil {
		return err
	}
	var answers [2][]byte
	for i := range answers {
		var size [4]byte
		if _, err := readFull(nc, size[:]); err != nil {
			return fmt.Errorf("reading answer %d: %w", i, err)
		}
		answers[i] = make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := readFull(nc, answers[i]); err != nil {
			return fmt.Errorf("reading answer %d: %w", i, err)
		}
	}
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	resp.SetVersion(2)
	if err := resp.ReadFrom(answers[1][5:]); err != nil {
		return err
	}
	if resp.ErrorCode != kerr.SaslAuthenticationFailed.Code {
		return errors.New("a wrong password was not refused")
	}
	return expectEOF(nc)
}

// With connections.max.reauth.ms small, franz-go re-authenticates on its
// own (KIP-368) and keeps producing; no session expires under it.
func TestSASLReauthentication(t *testing.T) {
	s := startSASLServer(t, "connections.max.reauth.ms=2000")
	s.addScramUser(t, "alice", alicePassword)
	cl := client(t, s.sslAddr, kgo.DialTLSConfig(s.sslTLS), kgo.SASL(scram.Auth{User: "alice", Pass: alicePassword}.AsSha512Mechanism()))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := createTopic(ctx, cl, "reauth", 1, 1); err != nil {
		t.Fatal(err)
	}
	labels := `listener="SASL_SSL",mechanism="SCRAM-SHA-512"`
	i := 0
	testutil.Eventually(t, 30*time.Second, func() bool {
		i++
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "reauth", Value: []byte(itoa(i))}).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
		return s.metric(t, "sluice_successful_reauthentication_total", labels) >= 2
	}, "two re-authentications")
	if n := s.metric(t, "sluice_expired_connections_killed_total", `listener="SASL_SSL"`); n != 0 {
		t.Errorf("%v connections closed with an expired session", n)
	}
	if n := s.metric(t, "sluice_failed_reauthentication_total", failedLabels("SASL_SSL", "SCRAM-SHA-512", "credentials")); n != 0 {
		t.Errorf("%v failed re-authentications", n)
	}
}
