// Package tlstest makes certificates and key stores for tests: a CA,
// server and client certificates it signs (expired ones too), written as
// PEM, PKCS12 or JKS keystores and truststores, as Kafka's tests make
// theirs with TestSslUtils. ECDSA P-256 keys keep generation fast.
package tlstest

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"strings"
	"time"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	pkcs12 "software.sslmate.com/src/go-pkcs12"
)

// Store types, as ssl.keystore.type takes them.
const (
	JKS    = "JKS"
	PKCS12 = "PKCS12"
	PEM    = "PEM"
)

// CA is a self-signed certificate authority.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// Leaf is a certificate the CA signed, with its key.
type Leaf struct {
	Cert *x509.Certificate
	Key  crypto.Signer
	CA   *CA
}

// LeafOptions shape a certificate. Zero NotBefore/NotAfter mean an hour
// ago and a day from now.
type LeafOptions struct {
	// Subject is the distinguished name, e.g. "CN=alice,OU=eng,O=Org".
	Subject string
	// Hosts are the subject alternative names (IP addresses or DNS names).
	Hosts     []string
	NotBefore time.Time
	NotAfter  time.Time
}

// NewCA makes a CA named cn.
func NewCA(cn string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return &CA{Cert: cert, Key: key}, err
}

// Issue signs a certificate usable by servers and clients alike, as a
// broker's keystore is (it is the client certificate of its own peers).
func (ca *CA) Issue(o LeafOptions) (*Leaf, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	subject, err := parseDN(o.Subject)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      subject,
		NotBefore:    o.NotBefore,
		NotAfter:     o.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	if tmpl.NotBefore.IsZero() {
		tmpl.NotBefore = time.Now().Add(-time.Hour)
	}
	if tmpl.NotAfter.IsZero() {
		tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	}
	for _, h := range o.Hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return &Leaf{Cert: cert, Key: key, CA: ca}, err
}

// parseDN reads a simple "CN=a,OU=b,O=c,L=d,ST=e,C=f" (no escapes).
func parseDN(dn string) (pkix.Name, error) {
	var n pkix.Name
	for _, part := range strings.Split(dn, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return n, fmt.Errorf("tlstest: %q is not KEY=value", part)
		}
		switch strings.ToUpper(k) {
		case "CN":
			n.CommonName = v
		case "OU":
			n.OrganizationalUnit = append(n.OrganizationalUnit, v)
		case "O":
			n.Organization = append(n.Organization, v)
		case "L":
			n.Locality = append(n.Locality, v)
		case "ST":
			n.Province = append(n.Province, v)
		case "C":
			n.Country = append(n.Country, v)
		default:
			return n, fmt.Errorf("tlstest: unknown attribute %s", k)
		}
	}
	return n, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

// CertPEM is the CA's certificate as PEM.
func (ca *CA) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
}

// ChainPEM is the leaf's certificate and its CA's, as PEM.
func (l *Leaf) ChainPEM() []byte {
	return append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: l.Cert.Raw}), l.CA.CertPEM()...)
}

// KeyPEM is the leaf's key as unencrypted PKCS#8 PEM.
func (l *Leaf) KeyPEM() []byte {
	der, err := x509.MarshalPKCS8PrivateKey(l.Key)
	if err != nil {
		panic(err) // an ECDSA key always marshals
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// Keystore encodes the leaf as a keystore of typ: JKS (the key protected
// with keyPassword, "" meaning the store's), PKCS12 or PEM (key and chain
// in one file; the passwords are not used).
func (l *Leaf) Keystore(typ, password, keyPassword string) ([]byte, error) {
	chain := []*x509.Certificate{l.CA.Cert}
	switch strings.ToUpper(typ) {
	case PEM:
		return append(l.KeyPEM(), l.ChainPEM()...), nil
	case PKCS12:
		return pkcs12.Modern.Encode(l.Key, l.Cert, chain, password)
	case JKS:
		if keyPassword == "" {
			keyPassword = password
		}
		der, err := x509.MarshalPKCS8PrivateKey(l.Key)
		if err != nil {
			return nil, err
		}
		ks := keystore.New()
		entry := keystore.PrivateKeyEntry{CreationTime: time.Now(), PrivateKey: der, CertificateChain: []keystore.Certificate{
			{Type: "X509", Content: l.Cert.Raw}, {Type: "X509", Content: l.CA.Cert.Raw},
		}}
		if err := ks.SetPrivateKeyEntry("localhost", entry, []byte(keyPassword)); err != nil {
			return nil, err
		}
		var b bytes.Buffer
		err = ks.Store(&b, []byte(password))
		return b.Bytes(), err
	}
	return nil, fmt.Errorf("tlstest: unknown store type %s", typ)
}

// Truststore encodes CAs' certificates as a truststore of typ.
func Truststore(typ, password string, cas ...*CA) ([]byte, error) {
	var certs []*x509.Certificate
	for _, ca := range cas {
		certs = append(certs, ca.Cert)
	}
	switch strings.ToUpper(typ) {
	case PEM:
		var out []byte
		for _, ca := range cas {
			out = append(out, ca.CertPEM()...)
		}
		return out, nil
	case PKCS12:
		return pkcs12.Modern.EncodeTrustStore(certs, password)
	case JKS:
		ks := keystore.New()
		for i, c := range certs {
			entry := keystore.TrustedCertificateEntry{CreationTime: time.Now(), Certificate: keystore.Certificate{Type: "X509", Content: c.Raw}}
			if err := ks.SetTrustedCertificateEntry(fmt.Sprintf("ca%d", i), entry); err != nil {
				return nil, err
			}
		}
		var b bytes.Buffer
		err := ks.Store(&b, []byte(password))
		return b.Bytes(), err
	}
	return nil, fmt.Errorf("tlstest: unknown store type %s", typ)
}

// WriteFile writes data to path atomically (a rename), as an operator
// rotating a certificate should, so no reader sees half a store.
func WriteFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
