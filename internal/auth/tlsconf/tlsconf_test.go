package tlsconf

import (
	"bytes"
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/auth"
	"github.com/sluice-io/sluice/internal/auth/tlsconf/tlstest"
)

// Every store type serves TLS and verifies a client certificate, whose
// subject becomes the principal (DEFAULT rules: the whole name).
func TestStoreTypesWithMutualTLS(t *testing.T) {
	p := newPKI(t)
	for _, typ := range []string{tlstest.PEM, tlstest.PKCS12, tlstest.JKS} {
		t.Run(typ, func(t *testing.T) {
			v := values{
				"ssl.keystore.type":       typ,
				"ssl.keystore.location":   p.keystore(t, p.server, typ, "ks-secret"),
				"ssl.truststore.type":     typ,
				"ssl.truststore.location": p.truststore(t, typ, "ts-secret", p.ca),
				"ssl.client.auth":         "required",
			}
			if typ != tlstest.PEM {
				v["ssl.keystore.password"] = "ks-secret"
				v["ssl.truststore.password"] = "ts-secret"
			}
			st := newStore(t, v)
			cs, serverErr, clientErr := handshake(st, p.clientConfig(p.client))
			if serverErr != nil || clientErr != nil {
				t.Fatalf("handshake: server %v, client %v", serverErr, clientErr)
			}
			got, err := st.Principal(cs)
			if err != nil || got != auth.User("CN=alice,OU=eng,O=Org") {
				t.Errorf("principal = %v, %v", got, err)
			}
		})
	}
}

// Java reads a PKCS12 file named JKS (keystore.type.compat); so do we.
func TestJKSTypeReadsPKCS12File(t *testing.T) {
	p := newPKI(t)
	st := newStore(t, values{
		"ssl.keystore.location": p.keystore(t, p.server, tlstest.PKCS12, "pw"),
		"ssl.keystore.password": "pw",
	})
	if _, serverErr, clientErr := handshake(st, p.clientConfig(nil)); serverErr != nil || clientErr != nil {
		t.Fatalf("handshake: %v, %v", serverErr, clientErr)
	}
}

func TestInlinePEMAndEncryptedKey(t *testing.T) {
	p := newPKI(t)
	st := newStore(t, values{
		"ssl.keystore.type":              "PEM",
		"ssl.keystore.certificate.chain": string(p.server.ChainPEM()),
		"ssl.keystore.key":               string(encryptedKeyPEM(t, p.server, "key-secret")),
		"ssl.key.password":               "key-secret",
		"ssl.truststore.type":            "PEM",
		"ssl.truststore.certificates":    string(p.ca.CertPEM()),
		"ssl.client.auth":                "required",
	})
	cs, serverErr, clientErr := handshake(st, p.clientConfig(p.client))
	if serverErr != nil || clientErr != nil {
		t.Fatalf("handshake: %v, %v", serverErr, clientErr)
	}
	if len(cs.PeerCertificates) != 1 {
		t.Errorf("peer certificates: %d", len(cs.PeerCertificates))
	}
	_, err := New(values{
		"ssl.keystore.type":              "PEM",
		"ssl.keystore.certificate.chain": string(p.server.ChainPEM()),
		"ssl.keystore.key":               string(encryptedKeyPEM(t, p.server, "key-secret")),
		"ssl.key.password":               "not-it",
	}.options(true))
	if err == nil || !strings.Contains(err.Error(), "ssl.keystore.key") || strings.Contains(err.Error(), "not-it") {
		t.Errorf("wrong key password: %v", err)
	}
}

func TestClientAuthModes(t *testing.T) {
	p := newPKI(t)
	base := func(mode string) values {
		return values{
			"ssl.keystore.type":           "PEM",
			"ssl.keystore.location":       p.keystore(t, p.server, tlstest.PEM, ""),
			"ssl.truststore.type":         "PEM",
			"ssl.truststore.certificates": string(p.ca.CertPEM()),
			"ssl.client.auth":             mode,
		}
	}
	for _, c := range []struct {
		mode  string
		cert  *tlstest.Leaf
		want  auth.Principal
		fails bool
	}{
		{"none", p.client, auth.Anonymous, false},
		{"requested", nil, auth.Anonymous, false},
		{"requested", p.client, auth.User("CN=alice,OU=eng,O=Org"), false},
		{"required", nil, auth.Principal{}, true},
		{"required", p.client, auth.User("CN=alice,OU=eng,O=Org"), false},
	} {
		st := newStore(t, base(c.mode))
		cs, serverErr, _ := handshake(st, p.clientConfig(c.cert))
		if c.fails {
			if serverErr == nil {
				t.Errorf("%s without a certificate: handshake passed", c.mode)
			}
			continue
		}
		if serverErr != nil {
			t.Errorf("%s: %v", c.mode, serverErr)
			continue
		}
		if got, err := st.Principal(cs); err != nil || got != c.want {
			t.Errorf("%s with cert %v: principal %v, %v; want %v", c.mode, c.cert != nil, got, err, c.want)
		}
	}
}

// An expired client certificate and one from a CA the truststore does not
// hold are refused by the handshake.
func TestRefusedClientCertificates(t *testing.T) {
	p := newPKI(t)
	other, err := tlstest.NewCA("Other CA")
	if err != nil {
		t.Fatal(err)
	}
	expired := p.issue(t, p.ca, tlstest.LeafOptions{Subject: "CN=old", NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)})
	untrusted := p.issue(t, other, tlstest.LeafOptions{Subject: "CN=mallory"})
	st := newStore(t, values{
		"ssl.keystore.type":           "PEM",
		"ssl.keystore.location":       p.keystore(t, p.server, tlstest.PEM, ""),
		"ssl.truststore.type":         "PEM",
		"ssl.truststore.certificates": string(p.ca.CertPEM()),
		"ssl.client.auth":             "required",
	})
	for name, leaf := range map[string]*tlstest.Leaf{"expired": expired, "untrusted": untrusted} {
		_, serverErr, clientErr := handshake(st, p.clientConfig(leaf))
		var verr *tls.CertificateVerificationError
		if !errors.As(serverErr, &verr) || clientErr == nil {
			t.Errorf("%s: server %v, client %v", name, serverErr, clientErr)
		}
	}
}

func TestMappingRulesGiveThePrincipal(t *testing.T) {
	p := newPKI(t)
	v := values{
		"ssl.keystore.type":           "PEM",
		"ssl.keystore.location":       p.keystore(t, p.server, tlstest.PEM, ""),
		"ssl.truststore.type":         "PEM",
		"ssl.truststore.certificates": string(p.ca.CertPEM()),
		"ssl.client.auth":             "required",
		"ssl.principal.mapping.rules": "RULE:^CN=(.*?),OU=(.*?),.*$/$1@$2/U,DEFAULT",
	}
	st := newStore(t, v)
	cs, serverErr, _ := handshake(st, p.clientConfig(p.client))
	if serverErr != nil {
		t.Fatal(serverErr)
	}
	if got, err := st.Principal(cs); err != nil || got.String() != "User:ALICE@ENG" {
		t.Errorf("principal %v, %v", got, err)
	}
	v["ssl.principal.mapping.rules"] = "RULE:^CN=(.*?),OU=ops.*$/$1/"
	st = newStore(t, v)
	cs, serverErr, _ = handshake(st, p.clientConfig(p.client))
	if serverErr != nil {
		t.Fatal(serverErr)
	}
	if _, err := st.Principal(cs); !errors.Is(err, ErrNoMatchingRule) {
		t.Errorf("no rule matched: %v", err)
	}
}

// A half-configured listener stops start-up with an error naming the key
// as it was set, never holding a password.
func TestHalfConfiguredNamesTheKey(t *testing.T) {
	p := newPKI(t)
	jks := p.keystore(t, p.server, tlstest.JKS, "right-pass")
	p12 := p.keystore(t, p.server, tlstest.PKCS12, "right-pass")
	ts := p.truststore(t, tlstest.JKS, "right-pass", p.ca)
	for _, c := range []struct {
		name string
		v    values
		key  string
	}{
		{"no keystore", values{}, "ssl.keystore.location"},
		{"required without truststore", values{"ssl.keystore.location": jks, "ssl.keystore.password": "right-pass", "ssl.client.auth": "required"}, "ssl.truststore.location"},
		{"wrong JKS password", values{"ssl.keystore.location": jks, "ssl.keystore.password": "wrong-pass"}, "ssl.keystore.location"},
		{"wrong JKS key password", values{"ssl.keystore.location": jks, "ssl.keystore.password": "right-pass", "ssl.key.password": "wrong-pass"}, "ssl.keystore.location"},
		{"wrong PKCS12 password", values{"ssl.keystore.type": "PKCS12", "ssl.keystore.location": p12, "ssl.keystore.password": "wrong-pass"}, "ssl.keystore.location"},
		{"wrong truststore password", values{"ssl.keystore.location": jks, "ssl.keystore.password": "right-pass", "ssl.truststore.location": ts, "ssl.truststore.password": "wrong-pass"}, "ssl.truststore.location"},
		{"keystore without password", values{"ssl.keystore.location": jks}, "ssl.keystore.password"},
		{"unreadable keystore", values{"ssl.keystore.location": p.dir + "/missing.jks", "ssl.keystore.password": "wrong-pass"}, "ssl.keystore.location"},
		{"listener prefix", values{"listener.name.ssl.ssl.keystore.location": jks, "ssl.keystore.password": "wrong-pass"}, "listener.name.ssl.ssl.keystore.location"},
		{"PEM keystore with a store password", values{"ssl.keystore.type": "PEM", "ssl.keystore.location": jks, "ssl.keystore.password": "wrong-pass"}, "ssl.keystore.password"},
		{"unknown type", values{"ssl.keystore.type": "BKS", "ssl.keystore.location": jks, "ssl.keystore.password": "wrong-pass"}, "ssl.keystore.type"},
		{"client auth", values{"ssl.keystore.location": jks, "ssl.keystore.password": "right-pass", "ssl.client.auth": "always"}, "ssl.client.auth"},
		{"protocol", values{"ssl.keystore.location": jks, "ssl.keystore.password": "right-pass", "ssl.enabled.protocols": "SSLv3"}, "ssl.enabled.protocols"},
		{"cipher", values{"ssl.keystore.location": jks, "ssl.keystore.password": "right-pass", "ssl.cipher.suites": "TLS_NOPE"}, "ssl.cipher.suites"},
		{"endpoint identification", values{"ssl.keystore.location": jks, "ssl.keystore.password": "right-pass", "ssl.endpoint.identification.algorithm": "ldap"}, "ssl.endpoint.identification.algorithm"},
		{"rules", values{"ssl.keystore.location": jks, "ssl.keystore.password": "right-pass", "ssl.principal.mapping.rules": "RULE:x"}, "ssl.principal.mapping.rules"},
		{"inline key without chain", values{"ssl.keystore.type": "PEM", "ssl.keystore.key": string(p.server.KeyPEM())}, "ssl.keystore.certificate.chain"},
	} {
		_, err := New(c.v.options(true))
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "configuration "+c.key+" ") || strings.Contains(msg, "right-pass") || strings.Contains(msg, "wrong-pass") {
			t.Errorf("%s: %v (want it to name %s and no password)", c.name, err, c.key)
		}
	}
	// A listener the node only connects to needs no keystore.
	if _, err := New(values{}.options(false)); err != nil {
		t.Errorf("client-only listener: %v", err)
	}
}

func TestProtocolsAndCipherSuites(t *testing.T) {
	for _, c := range []struct {
		protocols string
		lo, hi    uint16
		ok        bool
	}{
		{"TLSv1.2,TLSv1.3", tls.VersionTLS12, tls.VersionTLS13, true},
		{"TLSv1.3", tls.VersionTLS13, tls.VersionTLS13, true},
		{"TLSv1.2", tls.VersionTLS12, tls.VersionTLS12, true},
		{"TLSv1.1,TLSv1.3", 0, 0, false},
		{"SSLv3", 0, 0, false},
	} {
		lo, hi, err := versionRange(splitList(c.protocols))
		if (err == nil) != c.ok || lo != c.lo || hi != c.hi {
			t.Errorf("%s: %x-%x, %v", c.protocols, lo, hi, err)
		}
	}
	ids, only13, err := cipherSuites([]string{"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "SSL_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256"})
	if err != nil || only13 || len(ids) != 2 || ids[0] != tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 {
		t.Errorf("suites: %v, %v, %v", ids, only13, err)
	}
	if _, only13, err := cipherSuites([]string{"TLS_AES_256_GCM_SHA384"}); err != nil || !only13 {
		t.Errorf("TLS 1.3 only: %v, %v", only13, err)
	}

	// A TLS 1.2-only listener refuses a TLS 1.3-only client; a listener
	// naming one TLS 1.2 suite negotiates it.
	p := newPKI(t)
	ks := p.keystore(t, p.server, tlstest.PEM, "")
	st := newStore(t, values{"ssl.keystore.type": "PEM", "ssl.keystore.location": ks, "ssl.enabled.protocols": "TLSv1.2",
		"ssl.cipher.suites": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"})
	client := p.clientConfig(nil)
	cs, serverErr, _ := handshake(st, client)
	if serverErr != nil || cs.Version != tls.VersionTLS12 || cs.CipherSuite != tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 {
		t.Errorf("TLS 1.2: %v, version %x suite %x", serverErr, cs.Version, cs.CipherSuite)
	}
	client.MinVersion = tls.VersionTLS13
	if _, serverErr, _ := handshake(st, client); serverErr == nil {
		t.Error("a TLS 1.3-only client was served by a TLSv1.2 listener")
	}
}

// The broker's own client verifies the peer's chain, and its host name
// unless ssl.endpoint.identification.algorithm is empty; it presents its
// keystore when the peer asks.
func TestClientVerifiesPeer(t *testing.T) {
	p := newPKI(t)
	localhostOnly := p.issue(t, p.ca, tlstest.LeafOptions{Subject: "CN=broker", Hosts: []string{"localhost"}})
	other, _ := tlstest.NewCA("Other CA")
	untrusted := p.issue(t, other, tlstest.LeafOptions{Subject: "CN=broker", Hosts: []string{"127.0.0.1"}})
	server := func(leaf *tlstest.Leaf) *Store {
		return newStore(t, values{"ssl.keystore.type": "PEM", "ssl.keystore.location": p.keystore(t, leaf, tlstest.PEM, ""),
			"ssl.truststore.type": "PEM", "ssl.truststore.certificates": string(p.ca.CertPEM()), "ssl.client.auth": "required"})
	}
	client := func(endpoint string) *Store {
		st, err := New(values{"ssl.keystore.type": "PEM", "ssl.keystore.location": p.keystore(t, p.client, tlstest.PEM, ""),
			"ssl.truststore.type": "PEM", "ssl.truststore.certificates": string(p.ca.CertPEM()),
			"ssl.endpoint.identification.algorithm": endpoint}.options(false))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	for _, c := range []struct {
		name     string
		server   *tlstest.Leaf
		endpoint string
		ok       bool
	}{
		{"host name matches", p.server, "https", true},
		{"host name differs", localhostOnly, "https", false},
		{"host name not checked", localhostOnly, "", true},
		{"untrusted, host name not checked", untrusted, "", false},
	} {
		cs, serverErr, clientErr := handshake(server(c.server), client(c.endpoint).ClientConfig("127.0.0.1"))
		if ok := serverErr == nil && clientErr == nil; ok != c.ok {
			t.Errorf("%s: server %v, client %v", c.name, serverErr, clientErr)
		}
		if c.ok && len(cs.PeerCertificates) == 0 {
			t.Errorf("%s: no client certificate presented", c.name)
		}
	}
}

// Replacing the keystore file changes the certificate served once the
// check interval passes; a keystore with another subject is refused
// unless ssl.allow.dn.changes allows it, and a broken one keeps the old.
func TestKeystoreRotation(t *testing.T) {
	p := newPKI(t)
	clk := newManualClock()
	v := values{"ssl.keystore.location": p.keystore(t, p.server, tlstest.JKS, "pw"), "ssl.keystore.password": "pw"}
	o := v.options(true)
	o.Clock = clk
	st, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	check := func(want *tlstest.Leaf) {
		t.Helper()
		if got := servedCertificate(t, st, p); !bytes.Equal(got, want.Cert.Raw) {
			t.Errorf("served another certificate than %v %v", want.Cert.Subject, want.Cert.SerialNumber)
		}
	}
	check(p.server)
	renewed := p.issue(t, p.ca, tlstest.LeafOptions{Subject: "CN=broker,O=Sluice", Hosts: []string{"127.0.0.1", "localhost"}})
	p.keystore(t, renewed, tlstest.JKS, "pw")
	check(p.server) // the interval has not passed
	clk.Advance(DefaultReloadCheckInterval)
	check(renewed)

	renamed := p.issue(t, p.ca, tlstest.LeafOptions{Subject: "CN=someone-else", Hosts: []string{"127.0.0.1", "localhost"}})
	p.keystore(t, renamed, tlstest.JKS, "pw")
	if st.CheckFiles() {
		t.Error("a keystore with another subject was taken")
	}
	check(renewed)
	p.write(t, "keystore.jks", []byte("not a keystore"))
	if st.CheckFiles() {
		t.Error("a broken keystore was taken")
	}
	check(renewed)

	v["ssl.allow.dn.changes"] = "true"
	p.keystore(t, p.server, tlstest.JKS, "pw")
	o = v.options(true)
	st, err = New(o)
	if err != nil {
		t.Fatal(err)
	}
	p.keystore(t, renamed, tlstest.JKS, "pw")
	if !st.CheckFiles() {
		t.Error("ssl.allow.dn.changes=true: the new subject was refused")
	}
	check(renamed)
}
