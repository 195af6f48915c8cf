// Command authzmatrix is issue 16's differential authorization matrix: for
// each API key a client can call, it sends a raw request at a pinned
// version as alice (an mTLS principal, User:alice) without the ACL Kafka
// asks for, then again after the super user (User:admin) grants it (some
// keys in several stages, as Kafka checks more than one resource), and
// prints one normalised line per request: the key, the request, what alice
// holds, and every error code (and KIP-430 operations) of the answer keyed
// by resource name, sorted, so that the order of a response and the ids of
// a broker do not matter. Topics alice may not see are absent from a
// Metadata line. test/interop/authz_matrix_test.sh runs it against `sluice
// server` and the pinned Kafka with the same ACLs and requires equal
// transcripts; the last line lists the keys covered.
//
//	authzmatrix pki -dir DIR -password PASSWORD
//	authzmatrix run -bootstrap HOST:PORT -dir DIR
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/auth/tlsconf/tlstest"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: authzmatrix pki|run ...")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	dir := fs.String("dir", "", "directory of the test PKI")
	password := fs.String("password", "", "password of the stores (pki)")
	bootstrap := fs.String("bootstrap", "", "the broker's SSL listener (run)")
	timeout := fs.Duration("timeout", 150*time.Second, "bound on the whole run")
	fs.Parse(os.Args[2:])
	var err error
	switch os.Args[1] {
	case "pki":
		err = writePKI(*dir, *password)
	case "run":
		ctx, cancel := context.WithTimeout(context.Background(), *timeout)
		defer cancel()
		err = run(ctx, *bootstrap, *dir)
	default:
		err = fmt.Errorf("unknown command %s", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "authzmatrix:", err)
		os.Exit(1)
	}
}

// writePKI writes a CA, the broker's JKS keystore and truststore, and PEM
// certificates and keys for admin and alice.
func writePKI(dir, password string) error {
	ca, err := tlstest.NewCA("Authz Matrix CA")
	if err != nil {
		return err
	}
	broker, err := ca.Issue(tlstest.LeafOptions{Subject: "CN=broker,OU=brokers", Hosts: []string{"127.0.0.1", "localhost"}})
	if err != nil {
		return err
	}
	files := map[string]func() ([]byte, error){
		"broker.jks":     func() ([]byte, error) { return broker.Keystore(tlstest.JKS, password, "") },
		"truststore.jks": func() ([]byte, error) { return tlstest.Truststore(tlstest.JKS, password, ca) },
		"ca.pem":         func() ([]byte, error) { return ca.CertPEM(), nil },
	}
	for _, user := range []string{"admin", "alice"} {
		leaf, err := ca.Issue(tlstest.LeafOptions{Subject: "CN=" + user + ",OU=matrix"})
		if err != nil {
			return err
		}
		files[user+".pem"] = func() ([]byte, error) { return leaf.ChainPEM(), nil }
		files[user+"-key.pem"] = func() ([]byte, error) { return leaf.KeyPEM(), nil }
	}
	for name, encode := range files {
		data, err := encode()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := tlstest.WriteFile(filepath.Join(dir, name), data); err != nil {
			return err
		}
	}
	return nil
}

// client is a franz-go client presenting user's certificate.
func client(bootstrap, dir, user string) (*kgo.Client, error) {
	ca, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, user+".pem"), filepath.Join(dir, user+"-key.pem"))
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{cert}, ServerName: "127.0.0.1"}
	return kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.DialTLSConfig(cfg), kgo.RequestRetries(0))
}
