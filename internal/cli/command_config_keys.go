package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/magiconair/properties"

	"github.com/sluice-io/sluice/internal/auth/tlsconf"
)

// Kafka's client security keys the sluice commands read from
// --command-config.
const (
	keySecurityProtocol = "security.protocol"
	keySASLMechanism    = "sasl.mechanism"
	keySASLJAASConfig   = "sasl.jaas.config"
	// keySSLProtocol is the JVM's SSLContext protocol; the versions offered
	// come from ssl.enabled.protocols, so it is accepted and not read.
	keySSLProtocol = "ssl.protocol"
)

// supportedCommandConfigKey reports whether key is a security key the
// commands act on.
func supportedCommandConfigKey(key string) bool {
	switch key {
	case keySecurityProtocol, keySASLMechanism, keySASLJAASConfig, keySSLProtocol,
		tlsconf.KeyKeystoreType, tlsconf.KeyKeystoreLocation, tlsconf.KeyKeystorePassword,
		tlsconf.KeyKeyPassword, tlsconf.KeyKeystoreCertChain, tlsconf.KeyKeystoreKey,
		tlsconf.KeyTruststoreType, tlsconf.KeyTruststoreLocation, tlsconf.KeyTruststorePassword,
		tlsconf.KeyTruststoreCertificates, tlsconf.KeyEndpointIdentification,
		tlsconf.KeyEnabledProtocols, tlsconf.KeyCipherSuites:
		return true
	}
	return false
}

// checkCommandConfigKeys refuses a security key (security.*, ssl.*,
// sasl.*) the commands do not act on, naming it: a client that silently
// skipped sasl.login.callback.handler.class or a misspelt
// ssl.truststore.locaton would connect with less security than asked for.
// Kafka's other client keys (client.id, request.timeout.ms, acks, ...) do
// not concern security and are ignored: --timeout and the commands' own
// flags govern those.
func checkCommandConfigKeys(p *properties.Properties) error {
	keys := p.Keys()
	slices.Sort(keys)
	for _, k := range keys {
		if !isSecurityKey(k) || supportedCommandConfigKey(k) {
			continue
		}
		return fmt.Errorf("%s is not supported by the sluice commands (they read %s, %s, %s and the ssl.keystore.*, ssl.truststore.*, ssl.key.password, ssl.endpoint.identification.algorithm, ssl.enabled.protocols and ssl.cipher.suites keys)",
			k, keySecurityProtocol, keySASLMechanism, keySASLJAASConfig)
	}
	if v, ok := p.Get(keySSLProtocol); ok {
		switch strings.TrimSpace(v) {
		case "TLS", "TLSv1.2", "TLSv1.3":
		default:
			return fmt.Errorf("%s %q is not TLS, TLSv1.2 or TLSv1.3", keySSLProtocol, v)
		}
	}
	return nil
}

func isSecurityKey(k string) bool {
	for _, prefix := range []string{"security.", "ssl.", "sasl."} {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}
