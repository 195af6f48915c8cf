// Package security runs real `sluice server` processes with TLS listeners
// and drives them with franz-go at its default settings plus the security
// settings: TLS and mTLS (the principal through the mapping rules),
// refusals of what is not TLS or carries a bad certificate, counted in
// metrics; certificate rotation without a restart; a 3-node cluster whose
// inter-broker and controller listeners are SSL.
package security

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/auth/tlsconf/tlstest"
	"github.com/sluice-io/sluice/internal/testbin"
)

// binaryPath is set by TestMain: the sluice binary built once for all tests.
var binaryPath string

func TestMain(m *testing.M) {
	os.Exit(testbin.RunTests(m, &binaryPath))
}

// pki is a CA with the broker's keystore and truststore files and client
// certificates.
type pki struct {
	dir    string
	ca     *tlstest.CA
	broker *tlstest.Leaf
}

const storePassword = "store-secret-1"

func newPKI(t *testing.T) *pki {
	t.Helper()
	ca, err := tlstest.NewCA("Sluice Test CA")
	if err != nil {
		t.Fatal(err)
	}
	p := &pki{dir: t.TempDir(), ca: ca}
	p.broker = p.issue(t, tlstest.LeafOptions{Subject: "CN=broker,OU=brokers,O=Sluice", Hosts: []string{"127.0.0.1", "localhost"}})
	return p
}

func (p *pki) issue(t *testing.T, o tlstest.LeafOptions) *tlstest.Leaf {
	t.Helper()
	l, err := p.ca.Issue(o)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// writeKeystore writes leaf as the broker keystore of typ (keystore.<typ>).
func (p *pki) writeKeystore(t *testing.T, leaf *tlstest.Leaf, typ string) string {
	t.Helper()
	data, err := leaf.Keystore(typ, storePassword, "")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(p.dir, "keystore."+strings.ToLower(typ))
	if err := tlstest.WriteFile(path, data); err != nil {
		t.Fatal(err)
	}
	return path
}

func (p *pki) writeTruststore(t *testing.T, typ string) string {
	t.Helper()
	data, err := tlstest.Truststore(typ, storePassword, p.ca)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(p.dir, "truststore."+strings.ToLower(typ))
	if err := tlstest.WriteFile(path, data); err != nil {
		t.Fatal(err)
	}
	return path
}

// brokerSSL are the broker-wide ssl.* keys: a JKS keystore, a PKCS12
// truststore.
func (p *pki) brokerSSL(t *testing.T, clientAuth string) []string {
	return []string{
		"ssl.keystore.type=JKS",
		"ssl.keystore.location=" + p.writeKeystore(t, p.broker, tlstest.JKS),
		"ssl.keystore.password=" + storePassword,
		"ssl.truststore.type=PKCS12",
		"ssl.truststore.location=" + p.writeTruststore(t, tlstest.PKCS12),
		"ssl.truststore.password=" + storePassword,
		"ssl.client.auth=" + clientAuth,
	}
}

// clientTLS trusts the CA and presents leaf (none when nil).
func (p *pki) clientTLS(leaf *tlstest.Leaf) *tls.Config {
	roots := x509.NewCertPool()
	roots.AddCert(p.ca.Cert)
	c := &tls.Config{RootCAs: roots}
	if leaf != nil {
		cert := &tls.Certificate{Certificate: [][]byte{leaf.Cert.Raw, leaf.CA.Cert.Raw}, PrivateKey: leaf.Key}
		c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	return c
}

// sslServer is a single-node server with a PLAINTEXT listener (which the
// start-up probe uses), an SSL listener and the debug listener.
type sslServer struct {
	*testbin.Server
	sslAddr   string
	debugAddr string
}

func startSSLServer(t *testing.T, overrides ...string) *sslServer {
	t.Helper()
	ports, err := testbin.FreePorts(4)
	if err != nil {
		t.Fatal(err)
	}
	s := &sslServer{sslAddr: fmt.Sprintf("127.0.0.1:%d", ports[1]), debugAddr: fmt.Sprintf("127.0.0.1:%d", ports[3])}
	base := []string{
		fmt.Sprintf("listeners=PLAINTEXT://127.0.0.1:%d,SSL://%s,CONTROLLER://127.0.0.1:%d", ports[0], s.sslAddr, ports[2]),
		"sluice.debug.listener=" + s.debugAddr,
	}
	s.Server = testbin.StartServer(t, binaryPath, testbin.ServerConfig{
		DataDir: t.TempDir(), ClientPort: ports[0], ControllerPort: ports[2], Overrides: append(base, overrides...),
	})
	return s
}

// metric reads one sample of the server's /metrics ("" labels: the
// unlabelled series), or 0 when the series does not exist yet.
func (s *sslServer) metric(t *testing.T, name, labels string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + s.debugAddr + "/metrics")
	if err != nil {
		t.Fatalf("metrics: %v", err)
	}
	defer resp.Body.Close()
	want := name
	if labels != "" {
		want += "{" + labels + "}"
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		series, value, ok := strings.Cut(sc.Text(), " ")
		if ok && series == want {
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				t.Fatalf("metric %s: %v", series, err)
			}
			return v
		}
	}
	return 0
}

// client is a franz-go client at its defaults plus opts, closed at the end
// of the test.
func client(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// produceAndConsume creates topic, produces n records with the
// producer's defaults (acks=all, idempotent) and reads them back.
func produceAndConsume(t *testing.T, addr, topic string, n int, opts ...kgo.Opt) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prod := client(t, addr, opts...)
	if err := createTopic(ctx, prod, topic, 1, 1); err != nil {
		return err
	}
	for i := range n {
		if err := prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
			return fmt.Errorf("produce %d: %w", i, err)
		}
	}
	cons := client(t, addr, append(opts, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	got := 0
	for got < n {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("consumed %d of %d: %w", got, n, err)
		}
		for _, e := range fs.Errors() {
			return fmt.Errorf("consume: %w", e.Err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if string(r.Value) == strconv.Itoa(got) {
				got++
			}
		})
	}
	return nil
}

func itoa(n int) string { return strconv.Itoa(n) }

// createTopic creates topic and waits until its partitions have leaders.
func createTopic(ctx context.Context, cl *kgo.Client, topic string, partitions int32, rf int16) error {
	adm := kadm.NewClient(cl)
	resp, err := adm.CreateTopic(ctx, partitions, rf, nil, topic)
	if err == nil && resp.Err != nil && !errors.Is(resp.Err, kerr.TopicAlreadyExists) {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	for {
		md, err := adm.Metadata(ctx, topic)
		if err == nil {
			td := md.Topics[topic]
			ready := td.Err == nil && len(td.Partitions) == int(partitions)
			for _, pd := range td.Partitions {
				ready = ready && pd.Err == nil && pd.Leader >= 0
			}
			if ready {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topic %s has no leaders: %w", topic, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
