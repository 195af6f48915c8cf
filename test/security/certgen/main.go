// Command certgen writes a test PKI for the interop scripts: a CA, the
// broker's keystore (JKS) for 127.0.0.1 and localhost, a truststore of the
// CA (JKS and PKCS12, and PEM), and a client keystore (PKCS12) for
// CN=alice,OU=eng,O=Org. Every store has the password given.
//
//	go run ./test/security/certgen -dir DIR -password PASSWORD
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sluice-io/sluice/internal/auth/tlsconf/tlstest"
)

func main() {
	dir := flag.String("dir", "", "directory to write the stores to")
	password := flag.String("password", "", "password of every store")
	flag.Parse()
	if *dir == "" || *password == "" {
		fmt.Fprintln(os.Stderr, "usage: certgen -dir DIR -password PASSWORD")
		os.Exit(2)
	}
	if err := run(*dir, *password); err != nil {
		fmt.Fprintln(os.Stderr, "certgen:", err)
		os.Exit(1)
	}
}

func run(dir, password string) error {
	ca, err := tlstest.NewCA("Sluice Interop CA")
	if err != nil {
		return err
	}
	broker, err := ca.Issue(tlstest.LeafOptions{Subject: "CN=broker,OU=brokers,O=Sluice", Hosts: []string{"127.0.0.1", "localhost"}})
	if err != nil {
		return err
	}
	alice, err := ca.Issue(tlstest.LeafOptions{Subject: "CN=alice,OU=eng,O=Org"})
	if err != nil {
		return err
	}
	files := map[string]func() ([]byte, error){
		"broker.jks":     func() ([]byte, error) { return broker.Keystore(tlstest.JKS, password, "") },
		"client.p12":     func() ([]byte, error) { return alice.Keystore(tlstest.PKCS12, password, "") },
		"truststore.jks": func() ([]byte, error) { return tlstest.Truststore(tlstest.JKS, password, ca) },
		"truststore.p12": func() ([]byte, error) { return tlstest.Truststore(tlstest.PKCS12, password, ca) },
		"ca.pem":         func() ([]byte, error) { return ca.CertPEM(), nil },
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
