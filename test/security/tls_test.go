package security

import (
	"bytes"
	"context"
	"crypto/tls"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/auth/tlsconf/tlstest"
	"github.com/sluice-io/sluice/internal/testbin"
	"github.com/sluice-io/sluice/internal/testutil"
)

// franz-go produces and consumes over TLS and over mTLS. The mapping rules
// name clients of OU=eng only (no DEFAULT): a certificate of OU=eng is
// mapped and served, one of OU=ops has no principal and is refused, as
// Kafka fails the authentication of a name no rule maps.
func TestFranzGoOverTLSAndMutualTLS(t *testing.T) {
	p := newPKI(t)
	s := startSSLServer(t, append(p.brokerSSL(t, "requested"),
		"ssl.principal.mapping.rules=RULE:^CN=([a-z]+),OU=eng,.*$/$1/L")...)
	if err := produceAndConsume(t, s.sslAddr, "over-tls", 100, kgo.DialTLSConfig(p.clientTLS(nil))); err != nil {
		t.Fatalf("TLS: %v", err)
	}
	alice := p.issue(t, tlstest.LeafOptions{Subject: "CN=alice,OU=eng,O=Org"})
	if err := produceAndConsume(t, s.sslAddr, "over-mtls", 100, kgo.DialTLSConfig(p.clientTLS(alice))); err != nil {
		t.Fatalf("mTLS: %v", err)
	}
	ops := p.issue(t, tlstest.LeafOptions{Subject: "CN=bob,OU=ops,O=Org"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := client(t, s.sslAddr, kgo.DialTLSConfig(p.clientTLS(ops))).Ping(ctx); err == nil {
		t.Error("a certificate no rule maps was served")
	}
	if n := s.metric(t, "sluice_tls_handshake_failures_total", `listener="SSL",reason="principal"`); n < 1 {
		t.Errorf("unmapped certificate not counted: %v", n)
	}
	if n := s.metric(t, "sluice_tls_handshakes_total", `listener="SSL"`); n < 2 {
		t.Errorf("handshakes counted %v", n)
	}
}

// A plaintext Kafka request and garbage on the SSL listener are closed and
// counted; with ssl.client.auth=required an expired and an untrusted client
// certificate are refused and counted; the node serves good clients
// throughout.
func TestSSLListenerRefusesBadInput(t *testing.T) {
	p := newPKI(t)
	s := startSSLServer(t, p.brokerSSL(t, "required")...)
	for _, junk := range [][]byte{
		kmsg.NewRequestFormatter().AppendRequest(nil, kmsg.NewPtrApiVersionsRequest(), 1),
		bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, 64),
	} {
		c, err := net.Dial("tcp", s.sslAddr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		c.Write(junk)
		if n, err := c.Read(make([]byte, 64)); err == nil {
			t.Errorf("an SSL listener answered %d bytes to a non-TLS first packet", n)
		}
		c.Close()
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		return s.metric(t, "sluice_tls_handshake_failures_total", `listener="SSL",reason="not_tls"`) == 2
	}, "plaintext and garbage not counted as not_tls")

	other, err := tlstest.NewCA("Other CA")
	if err != nil {
		t.Fatal(err)
	}
	untrusted, err := other.Issue(tlstest.LeafOptions{Subject: "CN=mallory"})
	if err != nil {
		t.Fatal(err)
	}
	expired := p.issue(t, tlstest.LeafOptions{Subject: "CN=old", NotBefore: time.Now().Add(-72 * time.Hour), NotAfter: time.Now().Add(-time.Hour)})
	for name, leaf := range map[string]*tlstest.Leaf{"untrusted": untrusted, "expired": expired} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := client(t, s.sslAddr, kgo.DialTLSConfig(p.clientTLS(leaf))).Ping(ctx); err == nil {
			t.Errorf("%s client certificate served", name)
		}
		cancel()
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		return s.metric(t, "sluice_tls_handshake_failures_total", `listener="SSL",reason="certificate"`) >= 2
	}, "refused client certificates not counted")
	good := p.issue(t, tlstest.LeafOptions{Subject: "CN=alice,OU=eng"})
	if err := produceAndConsume(t, s.sslAddr, "after-refusals", 10, kgo.DialTLSConfig(p.clientTLS(good))); err != nil {
		t.Fatalf("a good client after the refusals: %v", err)
	}
}

// Replacing the keystore file rotates the certificate without a restart:
// new connections get the new certificate, a connection opened before
// keeps working.
func TestCertificateRotation(t *testing.T) {
	p := newPKI(t)
	ssl := p.brokerSSL(t, "none")
	s := startSSLServer(t, ssl...)
	cfg := p.clientTLS(nil)
	cfg.ServerName = "127.0.0.1"
	old, err := tls.Dial("tcp", s.sslAddr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if got := old.ConnectionState().PeerCertificates[0].SerialNumber; got.Cmp(p.broker.Cert.SerialNumber) != 0 {
		t.Fatalf("served serial %v before rotation", got)
	}

	renewed := p.issue(t, tlstest.LeafOptions{Subject: "CN=broker,OU=brokers,O=Sluice", Hosts: []string{"127.0.0.1", "localhost"}})
	p.writeKeystore(t, renewed, tlstest.JKS)
	testutil.Eventually(t, 15*time.Second, func() bool {
		c, err := tls.Dial("tcp", s.sslAddr, cfg)
		if err != nil {
			return false
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].SerialNumber.Cmp(renewed.Cert.SerialNumber) == 0
	}, "new connections never got the renewed certificate")
	if err := produceAndConsume(t, s.sslAddr, "after-rotation", 10, kgo.DialTLSConfig(p.clientTLS(nil))); err != nil {
		t.Fatalf("after rotation: %v", err)
	}

	// The connection opened before the rotation is still served.
	old.SetDeadline(time.Now().Add(10 * time.Second))
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(3)
	if _, err := old.Write(kmsg.NewRequestFormatter().AppendRequest(nil, req, 42)); err != nil {
		t.Fatalf("write on the old connection: %v", err)
	}
	head := make([]byte, 8)
	if _, err := old.Read(head); err != nil {
		t.Fatalf("the connection opened before the rotation was not served: %v", err)
	}
	if head[7] != 42 {
		t.Errorf("old connection answered correlation %v", head[4:8])
	}
}

// A half-configured SSL listener stops start-up with a message naming the
// key, never the password.
func TestHalfConfiguredSSLStopsStartUp(t *testing.T) {
	p := newPKI(t)
	jks := p.writeKeystore(t, p.broker, tlstest.JKS)
	for _, c := range []struct {
		name      string
		overrides []string
		key       string
	}{
		{"no keystore", nil, "ssl.keystore.location"},
		{"wrong password", []string{"ssl.keystore.location=" + jks, "ssl.keystore.password=wrong-password-9"}, "ssl.keystore.location"},
		{"required without truststore", []string{"ssl.keystore.location=" + jks, "ssl.keystore.password=" + storePassword,
			"ssl.client.auth=required"}, "ssl.truststore.location"},
		{"listener prefix", []string{"listener.name.ssl.ssl.keystore.location=" + jks, "listener.name.ssl.ssl.keystore.password=wrong-password-9"},
			"listener.name.ssl.ssl.keystore.location"},
		{"SASL listener", []string{"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SSL:SASL_SSL,CONTROLLER:PLAINTEXT"}, "listener SSL"},
	} {
		ports, err := testbin.FreePorts(3)
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"server", "--override", "log.dirs=" + t.TempDir(),
			"--override", "listeners=PLAINTEXT://127.0.0.1:" + itoa(ports[0]) + ",SSL://127.0.0.1:" + itoa(ports[1]) + ",CONTROLLER://127.0.0.1:" + itoa(ports[2]),
			"--override", "controller.quorum.voters=1@127.0.0.1:" + itoa(ports[2])}
		for _, o := range c.overrides {
			args = append(args, "--override", o)
		}
		proc := testbin.StartProcess(t, c.name, binaryPath, args...)
		select {
		case <-proc.Done():
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: still running", c.name)
		}
		logs := proc.Logs()
		if !strings.Contains(logs, c.key) || strings.Contains(logs, "wrong-password-9") || strings.Contains(logs, storePassword) {
			t.Errorf("%s: want a message naming %s and no password:\n%s", c.name, c.key, logs)
		}
	}
}
