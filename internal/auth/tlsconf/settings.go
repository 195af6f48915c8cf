package tlsconf

import (
	"crypto/tls"
	"fmt"
	"strings"
)

// Kafka's ssl.* keys this package reads, unprefixed; Lookup resolves a
// listener's listener.name.<listener>. override of each.
const (
	KeyKeystoreType           = "ssl.keystore.type"
	KeyKeystoreLocation       = "ssl.keystore.location"
	KeyKeystorePassword       = "ssl.keystore.password"
	KeyKeyPassword            = "ssl.key.password"
	KeyKeystoreCertChain      = "ssl.keystore.certificate.chain"
	KeyKeystoreKey            = "ssl.keystore.key"
	KeyTruststoreType         = "ssl.truststore.type"
	KeyTruststoreLocation     = "ssl.truststore.location"
	KeyTruststorePassword     = "ssl.truststore.password"
	KeyTruststoreCertificates = "ssl.truststore.certificates"
	KeyClientAuth             = "ssl.client.auth"
	KeyEnabledProtocols       = "ssl.enabled.protocols"
	KeyCipherSuites           = "ssl.cipher.suites"
	KeyEndpointIdentification = "ssl.endpoint.identification.algorithm"
	KeyPrincipalMappingRules  = "ssl.principal.mapping.rules"
	KeyAllowDNChanges         = "ssl.allow.dn.changes"
	KeyAllowSANChanges        = "ssl.allow.san.changes"
)

// Store types (ssl.keystore.type, ssl.truststore.type), any letter case.
const (
	TypeJKS    = "JKS"
	TypePKCS12 = "PKCS12"
	TypePEM    = "PEM"
)

// settings are a listener's ssl.* values, parsed; secrets stay here and
// never reach an error or a log line.
type settings struct {
	listener string
	name     func(key string) string

	keystore   storeSettings
	truststore storeSettings
	keyPass    secret

	clientAuth     tls.ClientAuthType
	clientAuthName string
	minVersion     uint16
	maxVersion     uint16
	ciphers        []uint16
	verifyHost     bool
	// endpointAlgorithm is ssl.endpoint.identification.algorithm.
	endpointAlgorithm string
	rules             string
	allowDN           bool
	allowSAN          bool
}

// storeSettings locate one store: a file of a type, or inline PEM.
type storeSettings struct {
	typ      string
	location string
	password secret
	// pem is the inline PEM (ssl.keystore.certificate.chain plus
	// ssl.keystore.key, or ssl.truststore.certificates).
	pem    string
	pemKey string
}

func (s storeSettings) configured() bool { return s.location != "" || s.pem != "" }

// secret is a password: set or not, and its value, which String hides.
type secret struct {
	value string
	set   bool
}

func (s secret) String() string { return "[hidden]" }

// readSettings reads and checks the values; every error names its key as
// it was set (listener.name.<listener>.ssl.x or ssl.x).
func readSettings(o Options) (*settings, error) {
	get := func(key string) (string, bool) {
		v, _, ok := o.Lookup(key)
		return strings.TrimSpace(v), ok && strings.TrimSpace(v) != ""
	}
	s := &settings{listener: o.Listener, name: func(key string) string {
		if _, setAs, ok := o.Lookup(key); ok && setAs != "" {
			return setAs
		}
		return key
	}}
	str := func(key, def string) string {
		if v, ok := get(key); ok {
			return v
		}
		return def
	}
	pass := func(key string) secret {
		v, _, ok := o.Lookup(key)
		return secret{value: v, set: ok}
	}
	s.keystore = storeSettings{
		typ: strings.ToUpper(str(KeyKeystoreType, TypeJKS)), location: str(KeyKeystoreLocation, ""),
		password: pass(KeyKeystorePassword), pem: str(KeyKeystoreCertChain, ""), pemKey: str(KeyKeystoreKey, ""),
	}
	s.truststore = storeSettings{
		typ: strings.ToUpper(str(KeyTruststoreType, TypeJKS)), location: str(KeyTruststoreLocation, ""),
		password: pass(KeyTruststorePassword), pem: str(KeyTruststoreCertificates, ""),
	}
	s.keyPass = pass(KeyKeyPassword)
	s.endpointAlgorithm = "https"
	if v, _, ok := o.Lookup(KeyEndpointIdentification); ok {
		s.endpointAlgorithm = strings.TrimSpace(v)
	}
	if err := s.checkStores(); err != nil {
		return nil, err
	}
	if err := s.readHandshake(str); err != nil {
		return nil, err
	}
	s.rules = str(KeyPrincipalMappingRules, "DEFAULT")
	s.allowDN = strings.EqualFold(str(KeyAllowDNChanges, "false"), "true")
	s.allowSAN = strings.EqualFold(str(KeyAllowSANChanges, "false"), "true")
	return s, nil
}

// readHandshake reads client auth, protocols, suites and host checks.
func (s *settings) readHandshake(str func(key, def string) string) error {
	s.clientAuthName = strings.ToLower(str(KeyClientAuth, "none"))
	switch s.clientAuthName {
	case "none":
		s.clientAuth = tls.NoClientCert
	case "requested":
		s.clientAuth = tls.VerifyClientCertIfGiven
	case "required":
		s.clientAuth = tls.RequireAndVerifyClientCert
	default:
		return s.errorf(KeyClientAuth, "%q is not one of required, requested, none", s.clientAuthName)
	}
	var err error
	s.minVersion, s.maxVersion, err = versionRange(splitList(str(KeyEnabledProtocols, "TLSv1.2,TLSv1.3")))
	if err != nil {
		return s.errorf(KeyEnabledProtocols, "%v", err)
	}
	suites := splitList(str(KeyCipherSuites, ""))
	ids, tls13only, err := cipherSuites(suites)
	if err != nil {
		return s.errorf(KeyCipherSuites, "%v", err)
	}
	s.ciphers = ids
	if tls13only {
		// Only TLS 1.3 suites named: as in the JVM, no TLS 1.2 handshake
		// can succeed, so TLS 1.3 is the floor.
		if s.maxVersion < tls.VersionTLS13 {
			return s.errorf(KeyCipherSuites, "names only TLS 1.3 suites, but %s does not enable TLSv1.3", s.name(KeyEnabledProtocols))
		}
		s.minVersion = tls.VersionTLS13
	}
	// Set to empty, it turns host name checks off; unset, it is https.
	switch alg := strings.ToLower(s.endpointAlgorithm); alg {
	case "https":
		s.verifyHost = true
	case "":
	default:
		return s.errorf(KeyEndpointIdentification, "%q is not https or empty", alg)
	}
	return nil
}

// checkStores refuses the combinations Kafka's DefaultSslEngineFactory
// refuses, and keys that belong to another store type.
func (s *settings) checkStores() error {
	for _, st := range []struct {
		store        storeSettings
		typeKey, loc string
		pemKeys      []string
	}{
		{s.keystore, KeyKeystoreType, KeyKeystoreLocation, []string{KeyKeystoreCertChain, KeyKeystoreKey}},
		{s.truststore, KeyTruststoreType, KeyTruststoreLocation, []string{KeyTruststoreCertificates}},
	} {
		switch st.store.typ {
		case TypeJKS, TypePKCS12, TypePEM:
		default:
			return s.errorf(st.typeKey, "unknown store type %q (want JKS, PKCS12 or PEM)", st.store.typ)
		}
		if st.store.pem != "" || st.store.pemKey != "" {
			if st.store.typ != TypePEM {
				return s.errorf(st.pemKeys[0], "inline PEM needs %s=PEM, not %s", s.name(st.typeKey), st.store.typ)
			}
			if st.store.location != "" {
				return s.errorf(st.loc, "cannot be set together with %s", s.name(st.pemKeys[0]))
			}
		}
	}
	ks := s.keystore
	if (ks.pem == "") != (ks.pemKey == "") {
		missing := KeyKeystoreKey
		if ks.pem == "" {
			missing = KeyKeystoreCertChain
		}
		return s.errorf(missing, "missing: an inline PEM keystore needs both %s and %s", s.name(KeyKeystoreCertChain), s.name(KeyKeystoreKey))
	}
	if ks.typ == TypePEM && ks.password.set && ks.configured() {
		return s.errorf(KeyKeystorePassword, "cannot be set for a PEM keystore; only %s may be (as in Kafka)", s.name(KeyKeyPassword))
	}
	if ks.typ != TypePEM && ks.location != "" && !ks.password.set {
		return s.errorf(KeyKeystorePassword, "missing: the %s keystore %s needs a password", ks.typ, ks.location)
	}
	if ks.typ != TypePEM && ks.location == "" && ks.password.set {
		return s.errorf(KeyKeystorePassword, "is set but %s is not (as Kafka refuses)", s.name(KeyKeystoreLocation))
	}
	ts := s.truststore
	if ts.typ != TypePEM && ts.location == "" && ts.password.set {
		return s.errorf(KeyTruststorePassword, "is set but %s is not (as Kafka refuses)", s.name(KeyTruststoreLocation))
	}
	if ts.typ == TypePEM && ts.password.set && ts.configured() {
		return s.errorf(KeyTruststorePassword, "cannot be set for a PEM truststore (as in Kafka)")
	}
	return nil
}

// errorf names the key as it was set and the listener.
func (s *settings) errorf(key, format string, args ...any) error {
	return fmt.Errorf("configuration %s (listener %s): %s", s.name(key), s.listener, fmt.Sprintf(format, args...))
}

// splitList splits a Kafka list value: comma separated, trimmed.
func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
