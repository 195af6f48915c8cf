package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/sluice-io/sluice/internal/auth/tlsconf/tlstest"
)

// The TLS phase's secrets: test values for a throwaway PKI in the scratch dir.
const (
	tlsStorePassword = "bench-store-pw"
	scramUser        = "bench"
	scramPassword    = "bench-scram-pw"
	scramIterations  = 4096 // Kafka's minimum and kafka-configs' default
)

// tlsPKI is the test PKI both brokers serve: a CA (ECDSA P-256, as tlstest makes it), the
// brokers' JKS keystore for 127.0.0.1, a PKCS12 truststore of the CA for Kafka's tools
// and the CA as a pool for the Go connection-rate client.
type tlsPKI struct {
	keystore     string
	clientConfig string // --command-config of Kafka's tools: security.protocol=SSL and the truststore
	roots        *x509.CertPool
}

func writeTLSPKI(dir string) (tlsPKI, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return tlsPKI{}, fmt.Errorf("pki dir: %w", err)
	}
	ca, err := tlstest.NewCA("Sluice Bench CA")
	if err != nil {
		return tlsPKI{}, fmt.Errorf("pki: %w", err)
	}
	leaf, err := ca.Issue(tlstest.LeafOptions{Subject: "CN=broker,OU=brokers,O=Sluice", Hosts: []string{"127.0.0.1", "localhost"}})
	if err != nil {
		return tlsPKI{}, fmt.Errorf("pki: %w", err)
	}
	ks, err := leaf.Keystore(tlstest.JKS, tlsStorePassword, "")
	if err != nil {
		return tlsPKI{}, fmt.Errorf("pki keystore: %w", err)
	}
	ts, err := tlstest.Truststore(tlstest.PKCS12, tlsStorePassword, ca)
	if err != nil {
		return tlsPKI{}, fmt.Errorf("pki truststore: %w", err)
	}
	p := tlsPKI{keystore: filepath.Join(dir, "broker.jks"), clientConfig: filepath.Join(dir, "client-ssl.properties"), roots: x509.NewCertPool()}
	truststore := filepath.Join(dir, "truststore.p12")
	props := strings.Join([]string{
		"security.protocol=SSL",
		"ssl.truststore.type=PKCS12",
		"ssl.truststore.location=" + truststore,
		"ssl.truststore.password=" + tlsStorePassword,
	}, "\n") + "\n"
	for path, data := range map[string][]byte{p.keystore: ks, truststore: ts, p.clientConfig: []byte(props)} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return tlsPKI{}, fmt.Errorf("pki: %w", err)
		}
	}
	p.roots.AppendCertsFromPEM(ca.CertPEM())
	return p, nil
}

// clientTLS is the Go client's TLS: the CA, the broker's IP checked, no session cache (so
// every connection makes a full handshake), and X25519 only: Go would otherwise offer its
// post-quantum hybrid first, which Sluice's Go server takes and Kafka's JSSE may not, and
// the two brokers would do different work.
func (p tlsPKI) clientTLS() *tls.Config {
	return &tls.Config{RootCAs: p.roots, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12, CurvePreferences: []tls.CurveID{tls.X25519}}
}

// brokerSettings are the keys both brokers get for their listener named SSL: the
// keystore, and with sasl that listener speaks SASL_SSL with SCRAM-SHA-256 (credentials
// from the metadata, as Kafka's ScramLoginModule on the server takes no options).
func (p tlsPKI) brokerSettings(sasl bool) []string {
	s := []string{
		"ssl.keystore.type=JKS",
		"ssl.keystore.location=" + p.keystore,
		"ssl.keystore.password=" + tlsStorePassword,
	}
	proto := "SSL"
	if sasl {
		proto = "SASL_SSL"
		s = append(s,
			"sasl.enabled.mechanisms=SCRAM-SHA-256",
			"listener.name.ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;")
	}
	return append(s, "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SSL:"+proto)
}

// newTLSBroker is a single broker with a second listener, named SSL, beside PLAINTEXT
// (which the suite's admin calls and warm-up keep using): Sluice with --override flags,
// Kafka with `kafka-ref start --ssl-listener --config FILE`.
func (s *suite) newTLSBroker(sys system, pki tlsPKI, sasl bool) (broker, error) {
	settings := pki.brokerSettings(sasl)
	if sys == sysSluice {
		b, err := newSluiceBroker(s.sluiceBin, s.scratch)
		if err != nil {
			return nil, err
		}
		ports, err := freePorts(1)
		if err != nil {
			return nil, err
		}
		b.sslPort = ports[0]
		for _, kv := range settings {
			b.extra = append(b.extra, "--override", kv)
		}
		return b, nil
	}
	k, err := newKafkaBroker(s.kafkaRef, s.scratch)
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(k.stateDir, "tls.properties")
	if err := os.WriteFile(conf, []byte(strings.Join(settings, "\n")+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("kafka tls config: %w", err)
	}
	k.startArgs = []string{"--ssl-listener", "--config", conf}
	return k, nil
}

// sslBootstrap is the address of a started broker's listener named SSL.
func sslBootstrap(b broker) (string, error) {
	switch b := b.(type) {
	case *sluiceBroker:
		return fmt.Sprintf("127.0.0.1:%d", b.sslPort), nil
	case *kafkaBroker:
		raw, err := os.ReadFile(filepath.Join(b.stateDir, "ssl_bootstrap"))
		if err != nil {
			return "", fmt.Errorf("kafka-ref ssl_bootstrap (bench/kafka-ref start --ssl-listener): %w", err)
		}
		return strings.TrimSpace(string(raw)), nil
	}
	return "", fmt.Errorf("no SSL listener on %T", b)
}

// tlsTarget is a broker as Kafka's tools see it over TLS: its SSL listener's address,
// with the broker's processes for the CPU figures.
type tlsTarget struct {
	target
	ssl string
}

func (t tlsTarget) Bootstrap() string { return t.ssl }

// addSCRAMUser creates the benchmark's SCRAM-SHA-256 user over the PLAINTEXT listener
// (AlterUserScramCredentials, as kafka-configs --add-config) and waits until a connection
// to the SASL_SSL listener authenticates with it: the credential has reached the broker's
// metadata image.
func addSCRAMUser(ctx context.Context, b broker, addr string, cfg *tls.Config) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Bootstrap()))
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	altered, err := kadm.NewClient(cl).AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{
		{User: scramUser, Mechanism: kadm.ScramSha256, Iterations: scramIterations, Password: scramPassword},
	})
	if err == nil {
		err = altered.Error()
	}
	if err != nil {
		return fmt.Errorf("create SCRAM user %s: %w", scramUser, err)
	}
	conn := connRateConfig{Addr: addr, TLS: cfg, SCRAM: &scram.Auth{User: scramUser, Pass: scramPassword}}
	return waitConnection(ctx, conn)
}

// waitConnection retries one connection of cfg until it succeeds or ctx ends.
func waitConnection(ctx context.Context, cfg connRateConfig) error {
	for {
		err := oneConnection(ctx, cfg, "bench-wait")
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("listener %s: %w (last error: %v)", cfg.Addr, ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
