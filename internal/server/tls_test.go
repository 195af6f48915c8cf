package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/api"
	"github.com/sluice-io/sluice/internal/auth"
	"github.com/sluice-io/sluice/internal/auth/tlsconf"
	"github.com/sluice-io/sluice/internal/auth/tlsconf/tlstest"
	"github.com/sluice-io/sluice/internal/testutil"
)

// tlsFixture is a CA, a server keystore and a client certificate.
type tlsFixture struct {
	ca     *tlstest.CA
	store  *tlsconf.Store
	client *tlstest.Leaf
}

func newTLSFixture(t *testing.T, clientAuth string) *tlsFixture {
	t.Helper()
	ca, err := tlstest.NewCA("Test CA")
	if err != nil {
		t.Fatal(err)
	}
	server, err := ca.Issue(tlstest.LeafOptions{Subject: "CN=broker", Hosts: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	client, err := ca.Issue(tlstest.LeafOptions{Subject: "CN=alice,OU=eng"})
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]string{
		"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": string(server.ChainPEM()), "ssl.keystore.key": string(server.KeyPEM()),
		"ssl.truststore.type": "PEM", "ssl.truststore.certificates": string(ca.CertPEM()),
		"ssl.client.auth": clientAuth, "ssl.principal.mapping.rules": "RULE:^CN=(.*?),OU=.*$/$1/,DEFAULT",
	}
	store, err := tlsconf.New(tlsconf.Options{Listener: "SSL", Serve: true, Lookup: func(k string) (string, string, bool) {
		v, ok := values[k]
		return v, k, ok
	}})
	if err != nil {
		t.Fatal(err)
	}
	return &tlsFixture{ca: ca, store: store, client: client}
}

func (f *tlsFixture) listener() Listener {
	return Listener{Name: "SSL", Address: "127.0.0.1:0", TLS: &TLS{Config: f.store.ServerConfig(), Principal: f.store.Principal}}
}

// clientConfig trusts the CA and presents leaf when not nil.
func (f *tlsFixture) clientConfig(leaf *tlstest.Leaf) *tls.Config {
	roots := x509.NewCertPool()
	roots.AddCert(f.ca.Cert)
	c := &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"}
	if leaf != nil {
		cert := &tls.Certificate{Certificate: [][]byte{leaf.Cert.Raw, f.ca.Cert.Raw}, PrivateKey: leaf.Key}
		c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	return c
}

// connSeen records the connection state handlers saw.
func connSeen(seen chan<- api.ConnState) api.Handler {
	return metadataHandler(func(_ context.Context, req *api.Request) api.Response {
		seen <- *req.Conn
		return api.Reply(req.Body.ResponseKind())
	})
}

func metadataOver(t *testing.T, addr string, opts ...kgo.Opt) error {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.RequestRetries(0)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = cl.Request(ctx, kmsg.NewPtrMetadataRequest())
	return err
}

// franz-go over mTLS: the handler sees the SSL protocol and the principal
// the mapping rules give the client certificate; without a client
// certificate (requested) it is User:ANONYMOUS, and on a plaintext
// listener PLAINTEXT and User:ANONYMOUS.
func TestTLSListenerSetsPrincipal(t *testing.T) {
	f := newTLSFixture(t, "requested")
	seen := make(chan api.ConnState, 4)
	ts := startServer(t, func(o *Options) {
		o.Listeners = []Listener{f.listener(), {Name: "PLAINTEXT", Address: "127.0.0.1:0"}}
	}, connSeen(seen))
	for _, c := range []struct {
		name     string
		addr     string
		opts     []kgo.Opt
		protocol string
		want     auth.Principal
	}{
		{"mTLS", ts.addr, []kgo.Opt{kgo.DialTLSConfig(f.clientConfig(f.client))}, auth.SSL, auth.User("alice")},
		{"TLS", ts.addr, []kgo.Opt{kgo.DialTLSConfig(f.clientConfig(nil))}, auth.SSL, auth.Anonymous},
		{"plaintext", ts.srv.Addr("PLAINTEXT").String(), nil, auth.Plaintext, auth.Anonymous},
	} {
		if err := metadataOver(t, c.addr, c.opts...); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := <-seen
		if got.SecurityProtocol != c.protocol || got.Principal != c.want {
			t.Errorf("%s: protocol %s principal %v, want %s %v", c.name, got.SecurityProtocol, got.Principal, c.protocol, c.want)
		}
	}
	if n := counterValue(t, ts.srv.metrics.tlsHandshakes.WithLabelValues("SSL")); n != 2 {
		t.Errorf("handshakes counted %v, want 2", n)
	}
}

// A plaintext Kafka request or garbage on a TLS listener is closed at
// once and counted; a client that says nothing is closed at the handshake
// timeout, without holding up the acceptor meanwhile.
func TestTLSListenerRefusesWhatIsNotTLS(t *testing.T) {
	f := newTLSFixture(t, "none")
	ts := startServer(t, func(o *Options) {
		o.Listeners = []Listener{f.listener()}
		o.HandshakeTimeout = 300 * time.Millisecond
	}, metadataHandler(nil))

	silent := dial(t, ts.addr) // holds a handshake open
	plain := dial(t, ts.addr)
	send(t, plain, kmsg.NewPtrApiVersionsRequest(), 3, 1)
	expectClosed(t, plain)
	garbage := dial(t, ts.addr)
	garbage.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	expectClosed(t, garbage)
	if n := counterValue(t, ts.srv.metrics.tlsFailures.WithLabelValues("SSL", tlsNotTLS)); n != 2 {
		t.Errorf("not_tls failures %v, want 2", n)
	}
	if err := metadataOver(t, ts.addr, kgo.DialTLSConfig(f.clientConfig(nil))); err != nil {
		t.Fatalf("a TLS client while a handshake hangs: %v", err)
	}
	started := time.Now()
	expectClosed(t, silent)
	if waited := time.Since(started); waited > 5*time.Second {
		t.Errorf("silent connection closed after %v", waited)
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		return counterValue(t, ts.srv.metrics.tlsFailures.WithLabelValues("SSL", tlsTimeout)) == 1
	}, "the silent handshake was not counted as a timeout")
}

// With ssl.client.auth=required, no certificate, an expired one and an
// untrusted one are refused at the handshake and counted.
func TestTLSListenerRefusesClientCertificates(t *testing.T) {
	f := newTLSFixture(t, "required")
	ts := startServer(t, func(o *Options) { o.Listeners = []Listener{f.listener()} }, metadataHandler(nil))
	expired, err := f.ca.Issue(tlstest.LeafOptions{Subject: "CN=old", NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	other, _ := tlstest.NewCA("Other CA")
	untrusted, err := other.Issue(tlstest.LeafOptions{Subject: "CN=mallory"})
	if err != nil {
		t.Fatal(err)
	}
	for name, leaf := range map[string]*tlstest.Leaf{"none": nil, "expired": expired, "untrusted": untrusted} {
		if err := metadataOver(t, ts.addr, kgo.DialTLSConfig(f.clientConfig(leaf))); err == nil {
			t.Errorf("%s client certificate: served", name)
		}
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		return counterValue(t, ts.srv.metrics.tlsFailures.WithLabelValues("SSL", tlsCertificate)) == 3
	}, "three refused client certificates not counted")
	if err := metadataOver(t, ts.addr, kgo.DialTLSConfig(f.clientConfig(f.client))); err != nil {
		t.Errorf("a good client certificate: %v", err)
	}
}

// On a TLS listener shared with another protocol, the divert sees the
// bytes after the handshake: the other protocol runs over TLS too.
func TestTLSListenerDivertsAfterHandshake(t *testing.T) {
	f := newTLSFixture(t, "none")
	diverted := make(chan string, 1)
	l := f.listener()
	l.Divert = &Divert{PrefixLen: 4, Match: func(p []byte) bool { return string(p) == "RAFT" },
		Serve: func(nc net.Conn, peeked []byte) {
			defer nc.Close()
			rest := make([]byte, 2)
			io.ReadFull(nc, rest)
			_, isTLS := nc.(*tls.Conn)
			if isTLS {
				diverted <- string(peeked) + string(rest)
			} else {
				diverted <- "not over TLS"
			}
		}}
	ts := startServer(t, func(o *Options) { o.Listeners = []Listener{l} }, metadataHandler(nil))
	c, err := tls.Dial("tcp", ts.addr, f.clientConfig(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("RAFT!!"))
	select {
	case got := <-diverted:
		if got != "RAFT!!" {
			t.Errorf("diverted %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("not diverted")
	}
	if err := metadataOver(t, ts.addr, kgo.DialTLSConfig(f.clientConfig(nil))); err != nil {
		t.Errorf("a Kafka client on the shared TLS listener: %v", err)
	}
}
