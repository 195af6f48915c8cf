package cli

import (
	"strings"
	"testing"

	"github.com/sluice-io/sluice/internal/auth/tlsconf/tlstest"
)

// Inline PEM written over continuation lines, as Kafka's documentation
// shows it, is read: the keystore's chain and key and the truststore.
func TestCommandConfigInlinePEM(t *testing.T) {
	ca, err := tlstest.NewCA("CLI Test CA")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Issue(tlstest.LeafOptions{Subject: "CN=admin"})
	if err != nil {
		t.Fatal(err)
	}
	continued := func(pem []byte) string {
		return strings.ReplaceAll(strings.TrimSpace(string(pem)), "\n", " \\\n    ")
	}
	text := "security.protocol=SSL\nssl.keystore.type=PEM\n" +
		"ssl.keystore.certificate.chain=" + continued(leaf.ChainPEM()) + "\n" +
		"ssl.keystore.key=" + continued(leaf.KeyPEM()) + "\n" +
		"ssl.truststore.type=PEM\nssl.truststore.certificates=" + continued(ca.CertPEM()) + "\n"
	if !strings.Contains(text, "----- \\\n") {
		t.Fatalf("not continued:\n%s", text)
	}
	if _, err := commandConfigOpts(writeProperties(t, text)); err != nil {
		t.Fatalf("inline PEM over continuation lines: %v", err)
	}
	if got := inlinePEM("ssl.truststore.location", "-----BEGIN X----- a b -----END X-----"); got != "-----BEGIN X----- a b -----END X-----" {
		t.Errorf("a key that is not inline PEM changed: %q", got)
	}
}
