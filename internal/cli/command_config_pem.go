package cli

import (
	"regexp"
	"strings"

	"github.com/sluice-io/sluice/internal/auth/tlsconf"
)

// pemBlock is one PEM block whose lines may have been joined, as a
// properties file's continuation lines join them.
var pemBlock = regexp.MustCompile(`(?s)-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END ([A-Z0-9 ]+)-----`)

// inlinePEM restores the line breaks of the inline PEM keys
// (ssl.keystore.certificate.chain, ssl.keystore.key,
// ssl.truststore.certificates) that Kafka's documented form loses: each
// value written over continuation lines reaches the reader as one line,
// which Kafka's PemParser accepts (it ignores the whitespace in a block)
// and Go's PEM decoder does not. Other keys are returned as they are.
func inlinePEM(key, value string) string {
	switch key {
	case tlsconf.KeyKeystoreCertChain, tlsconf.KeyKeystoreKey, tlsconf.KeyTruststoreCertificates:
	default:
		return value
	}
	return pemBlock.ReplaceAllStringFunc(value, func(block string) string {
		m := pemBlock.FindStringSubmatch(block)
		body := strings.Join(strings.Fields(m[2]), "")
		var b strings.Builder
		b.WriteString("-----BEGIN " + m[1] + "-----\n")
		for len(body) > 64 {
			b.WriteString(body[:64] + "\n")
			body = body[64:]
		}
		if body != "" {
			b.WriteString(body + "\n")
		}
		b.WriteString("-----END " + m[3] + "-----\n")
		return b.String()
	})
}
