package tlsconf

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/auth/tlsconf/tlstest"
	"github.com/sluice-io/sluice/internal/clock"
)

// pki is a CA, a server certificate for 127.0.0.1 and localhost, and a
// client certificate, in a temporary directory.
type pki struct {
	dir    string
	ca     *tlstest.CA
	server *tlstest.Leaf
	client *tlstest.Leaf
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	ca, err := tlstest.NewCA("Test CA")
	if err != nil {
		t.Fatal(err)
	}
	p := &pki{dir: t.TempDir(), ca: ca}
	p.server = p.issue(t, ca, tlstest.LeafOptions{Subject: "CN=broker,O=Sluice", Hosts: []string{"127.0.0.1", "localhost"}})
	p.client = p.issue(t, ca, tlstest.LeafOptions{Subject: "CN=alice,OU=eng,O=Org"})
	return p
}

func (p *pki) issue(t *testing.T, ca *tlstest.CA, o tlstest.LeafOptions) *tlstest.Leaf {
	t.Helper()
	l, err := ca.Issue(o)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// keystore writes leaf as a keystore file of typ and returns its path.
func (p *pki) keystore(t *testing.T, leaf *tlstest.Leaf, typ, password string) string {
	t.Helper()
	data, err := leaf.Keystore(typ, password, "")
	if err != nil {
		t.Fatal(err)
	}
	return p.write(t, "keystore."+strings.ToLower(typ), data)
}

func (p *pki) truststore(t *testing.T, typ, password string, cas ...*tlstest.CA) string {
	t.Helper()
	data, err := tlstest.Truststore(typ, password, cas...)
	if err != nil {
		t.Fatal(err)
	}
	return p.write(t, "truststore."+strings.ToLower(typ), data)
}

func (p *pki) write(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := tlstest.WriteFile(path, data); err != nil {
		t.Fatal(err)
	}
	return path
}

// values is a listener's configuration as Lookup serves it: a key under
// listener.name.ssl. wins over the bare key, as in Kafka.
type values map[string]string

func (v values) lookup(key string) (string, string, bool) {
	if x, ok := v["listener.name.ssl."+key]; ok {
		return x, "listener.name.ssl." + key, true
	}
	x, ok := v[key]
	return x, key, ok
}

func (v values) options(serve bool) Options {
	return Options{Listener: "SSL", Lookup: v.lookup, Serve: serve}
}

func newStore(t *testing.T, v values) *Store {
	t.Helper()
	st, err := New(v.options(true))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// handshake runs a server handshake with st's server config against a
// client config over an in-memory pipe and returns the server's view.
func handshake(st *Store, client *tls.Config) (tls.ConnectionState, error, error) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	srv := tls.Server(a, st.ServerConfig())
	cl := tls.Client(b, client)
	clientErr := make(chan error, 1)
	go func() {
		err := cl.Handshake()
		if err == nil {
			// TLS 1.3 reports a refused client certificate on the first read.
			_, err = cl.Read(make([]byte, 1))
		}
		clientErr <- err
		b.Close()
	}()
	serverErr := srv.Handshake()
	if serverErr == nil {
		srv.Write([]byte{1})
	} else {
		a.Close()
	}
	return srv.ConnectionState(), serverErr, <-clientErr
}

// clientConfig trusts the pki's CA and presents leaf (none when nil).
func (p *pki) clientConfig(leaf *tlstest.Leaf) *tls.Config {
	roots := x509.NewCertPool()
	roots.AddCert(p.ca.Cert)
	c := &tls.Config{RootCAs: roots, ServerName: "localhost"}
	if leaf != nil {
		// Sent whatever CAs the server names, so the server's verification
		// is what refuses an untrusted one.
		cert := &tls.Certificate{Certificate: [][]byte{leaf.Cert.Raw}, PrivateKey: leaf.Key, Leaf: leaf.Cert}
		c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	return c
}

// encryptedKeyPEM encrypts leaf's key as PBES2 (PBKDF2-HMAC-SHA256,
// AES-256-CBC), as openssl pkcs8 -topk8 -v2 aes-256-cbc writes it.
func encryptedKeyPEM(t *testing.T, leaf *tlstest.Leaf, password string) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(leaf.Key)
	if err != nil {
		t.Fatal(err)
	}
	salt, iv := make([]byte, 16), make([]byte, 16)
	rand.Read(salt)
	rand.Read(iv)
	key, err := pbkdf2.Key(sha256.New, password, salt, 2048, 32)
	if err != nil {
		t.Fatal(err)
	}
	pad := 16 - len(der)%16
	plain := append(der, []byte(strings.Repeat(string(rune(pad)), pad))...)
	block, _ := aes.NewCipher(key)
	ct := make([]byte, len(plain))
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(ct, plain)
	must := func(b []byte, err error) asn1.RawValue {
		if err != nil {
			t.Fatal(err)
		}
		return asn1.RawValue{FullBytes: b}
	}
	kdf := must(asn1.Marshal(pbkdf2Params{Salt: salt, Iterations: 2048, KeyLength: 32, PRF: pkix.AlgorithmIdentifier{Algorithm: oidHMACSHA256, Parameters: asn1.NullRawValue}}))
	enc := pkix.AlgorithmIdentifier{Algorithm: oidAES256CBC, Parameters: must(asn1.Marshal(iv))}
	params := must(asn1.Marshal(pbes2Params{KeyDerivation: pkix.AlgorithmIdentifier{Algorithm: oidPBKDF2, Parameters: kdf}, Encryption: enc}))
	out, err := asn1.Marshal(encryptedPrivateKeyInfo{Algorithm: pkix.AlgorithmIdentifier{Algorithm: oidPBES2, Parameters: params}, Data: ct})
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: out})
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// servedCertificate is the certificate st serves now, as a client sees it.
func servedCertificate(t *testing.T, st *Store, p *pki) []byte {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go tls.Server(a, st.ServerConfig()).Handshake()
	cl := tls.Client(b, p.clientConfig(nil))
	if err := cl.Handshake(); err != nil {
		t.Fatalf("handshake: %v", err)
	}
	return cl.ConnectionState().PeerCertificates[0].Raw
}

func newManualClock() *clock.Manual { return clock.NewManual(time.Unix(1_700_000_000, 0)) }
