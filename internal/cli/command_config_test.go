package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --command-config takes Kafka's client properties; a bad one fails naming
// the key, never the password.
func TestCommandConfigOpts(t *testing.T) {
	write := func(text string) string {
		path := filepath.Join(t.TempDir(), "client.properties")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	plainJAAS := `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="hunter2";` + "\n"
	for _, ok := range []string{
		"security.protocol=PLAINTEXT\n",
		"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n" + plainJAAS,
		"security.protocol=sasl_plaintext\nsasl.mechanism=SCRAM-SHA-512\n" + strings.Replace(plainJAAS, "plain.PlainLoginModule", "scram.ScramLoginModule", 1),
		"security.protocol=SSL\n",
	} {
		if opts, err := commandConfigOpts(write(ok)); err != nil {
			t.Errorf("%q: %v", ok, err)
		} else if strings.Contains(ok, "SSL") || strings.Contains(ok, "sasl") {
			if len(opts) == 0 {
				t.Errorf("%q: no client options", ok)
			}
		}
	}
	for text, want := range map[string]string{
		"security.protocol=KERBEROS\n":                                                                               "security.protocol",
		"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n":                                                   "sasl.jaas.config must be set",
		"security.protocol=SASL_PLAINTEXT\n" + plainJAAS:                                                             "sasl.mechanism GSSAPI",
		"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=x hunter2\n":                       "sasl.jaas.config",
		"security.protocol=SSL\nssl.truststore.location=/nonexistent/hunter2.jks\nssl.truststore.password=hunter2\n": "ssl.truststore",
	} {
		_, err := commandConfigOpts(write(text))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
		if err != nil && strings.Count(err.Error(), "hunter2") > strings.Count(err.Error(), "/nonexistent/hunter2.jks") {
			t.Errorf("%q: the error shows the password: %v", text, err)
		}
	}
	if _, err := commandConfigOpts(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing file accepted")
	}
}
