package tlsconf

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	pkcs12 "software.sslmate.com/src/go-pkcs12"
)

// jksMagic opens a JKS file. Java reads a PKCS12 file named JKS and a JKS
// file named PKCS12 alike (keystore.type.compat), so the bytes decide.
const jksMagic = 0xFEEDFEED

func isJKS(b []byte) bool { return len(b) >= 4 && binary.BigEndian.Uint32(b) == jksMagic }

// loadKeystore reads the keystore into the certificates the listener
// serves (every private key entry of a JKS file, the key of a PKCS12 or
// PEM one). No keystore configured gives none.
func (s *settings) loadKeystore() ([]tls.Certificate, error) {
	ks := s.keystore
	keyPass := s.keyPass
	if !keyPass.set {
		keyPass = ks.password // Kafka: the key password defaults to the store's
	}
	switch {
	case ks.pem != "":
		c, err := pemKeyPair([]byte(ks.pem+"\n"+ks.pemKey), keyPass)
		if err != nil {
			return nil, s.errorf(KeyKeystoreKey, "%v", err)
		}
		return []tls.Certificate{c}, nil
	case ks.location == "":
		return nil, nil
	}
	data, err := os.ReadFile(ks.location)
	if err != nil {
		return nil, s.errorf(KeyKeystoreLocation, "reading the keystore: %v", err)
	}
	var certs []tls.Certificate
	switch {
	case ks.typ == TypePEM:
		var c tls.Certificate
		c, err = pemKeyPair(data, keyPass)
		certs = []tls.Certificate{c}
	case isJKS(data):
		certs, err = jksKeyPairs(data, ks.password.value, keyPass.value)
	default:
		var c tls.Certificate
		c, err = pkcs12KeyPair(data, ks.password.value)
		certs = []tls.Certificate{c}
	}
	if err != nil {
		return nil, s.errorf(KeyKeystoreLocation, "keystore %s: %v", ks.location, err)
	}
	return certs, nil
}

// loadTruststore reads the trusted certificates; none configured gives
// nil (the system's roots, as the JVM's cacerts in Kafka).
func (s *settings) loadTruststore() ([]*x509.Certificate, error) {
	ts := s.truststore
	switch {
	case ts.pem != "":
		certs, err := pemCertificates([]byte(ts.pem))
		if err != nil {
			return nil, s.errorf(KeyTruststoreCertificates, "%v", err)
		}
		return certs, nil
	case ts.location == "":
		return nil, nil
	}
	data, err := os.ReadFile(ts.location)
	if err != nil {
		return nil, s.errorf(KeyTruststoreLocation, "reading the truststore: %v", err)
	}
	var certs []*x509.Certificate
	switch {
	case ts.typ == TypePEM:
		certs, err = pemCertificates(data)
	case isJKS(data):
		certs, err = jksTrusted(data, ts.password.value)
	default:
		certs, err = pkcs12.DecodeTrustStore(data, ts.password.value)
		err = explainPKCS12(err)
	}
	if err == nil && len(certs) == 0 {
		err = errors.New("holds no trusted certificate")
	}
	if err != nil {
		return nil, s.errorf(KeyTruststoreLocation, "truststore %s: %v", ts.location, err)
	}
	return certs, nil
}

func explainPKCS12(err error) error {
	if errors.Is(err, pkcs12.ErrIncorrectPassword) {
		return errors.New("wrong password, or not a PKCS12 file")
	}
	return err
}

func pkcs12KeyPair(data []byte, password string) (tls.Certificate, error) {
	key, leaf, cas, err := pkcs12.DecodeChain(data, password)
	if err != nil {
		return tls.Certificate{}, explainPKCS12(err)
	}
	chain := []*x509.Certificate{leaf}
	return keyPair(key, append(chain, cas...))
}

func jksLoad(data []byte, password string) (keystore.KeyStore, error) {
	ks := keystore.New(keystore.WithOrderedAliases())
	if err := ks.Load(bytes.NewReader(data), []byte(password)); err != nil {
		return ks, fmt.Errorf("wrong password or damaged JKS file: %w", err)
	}
	return ks, nil
}

func jksKeyPairs(data []byte, storePass, keyPass string) ([]tls.Certificate, error) {
	ks, err := jksLoad(data, storePass)
	if err != nil {
		return nil, err
	}
	var out []tls.Certificate
	for _, alias := range ks.Aliases() {
		if !ks.IsPrivateKeyEntry(alias) {
			continue
		}
		e, err := ks.GetPrivateKeyEntry(alias, []byte(keyPass))
		if err != nil {
			return nil, fmt.Errorf("key %q: wrong key password (ssl.key.password) or damaged entry: %w", alias, err)
		}
		key, err := x509.ParsePKCS8PrivateKey(e.PrivateKey)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", alias, err)
		}
		var chain []*x509.Certificate
		for _, c := range e.CertificateChain {
			cert, err := x509.ParseCertificate(c.Content)
			if err != nil {
				return nil, fmt.Errorf("key %q: certificate: %w", alias, err)
			}
			chain = append(chain, cert)
		}
		pair, err := keyPair(key, chain)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", alias, err)
		}
		out = append(out, pair)
	}
	if len(out) == 0 {
		return nil, errors.New("holds no private key entry")
	}
	return out, nil
}

func jksTrusted(data []byte, password string) ([]*x509.Certificate, error) {
	ks, err := jksLoad(data, password)
	if err != nil {
		return nil, err
	}
	var out []*x509.Certificate
	for _, alias := range ks.Aliases() {
		if !ks.IsTrustedCertificateEntry(alias) {
			continue
		}
		e, err := ks.GetTrustedCertificateEntry(alias)
		if err != nil {
			return nil, fmt.Errorf("certificate %q: %w", alias, err)
		}
		cert, err := x509.ParseCertificate(e.Certificate.Content)
		if err != nil {
			return nil, fmt.Errorf("certificate %q: %w", alias, err)
		}
		out = append(out, cert)
	}
	return out, nil
}

// keyPair joins a private key and its chain (leaf first), checking that
// the key is the leaf's.
func keyPair(key any, chain []*x509.Certificate) (tls.Certificate, error) {
	if len(chain) == 0 {
		return tls.Certificate{}, errors.New("private key without a certificate")
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return tls.Certificate{}, fmt.Errorf("unsupported private key type %T", key)
	}
	pub, ok := signer.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(chain[0].PublicKey) {
		return tls.Certificate{}, errors.New("the private key does not match the first certificate of the chain")
	}
	c := tls.Certificate{PrivateKey: signer, Leaf: chain[0]}
	for _, cert := range chain {
		c.Certificate = append(c.Certificate, cert.Raw)
	}
	return c, nil
}

// sameIdentity reports what changed between two keystores' leaf
// certificates: Kafka refuses a reloaded keystore whose subject or
// subject alternative names differ unless ssl.allow.dn.changes or
// ssl.allow.san.changes allows it.
func sameIdentity(old, new []tls.Certificate) (dn, san bool) {
	if len(old) == 0 || len(new) == 0 {
		return true, true
	}
	a, b := old[0].Leaf, new[0].Leaf
	dn = bytes.Equal(a.RawSubject, b.RawSubject)
	san = slices.Equal(a.DNSNames, b.DNSNames) && slices.Equal(a.EmailAddresses, b.EmailAddresses) &&
		slices.EqualFunc(a.IPAddresses, b.IPAddresses, net.IP.Equal) &&
		slices.EqualFunc(a.URIs, b.URIs, func(x, y *url.URL) bool { return x.String() == y.String() })
	return dn, san
}
