package security

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/testbin"
)

// Half-configured SASL stops start-up with a message naming the key and
// never a password: Kafka's default mechanism (GSSAPI), a mechanism
// without its JAAS config, a JAAS config that does not parse, an
// inter-broker mechanism the listener does not enable, the JWT validator
// with a JWKS file that does not exist, and SCRAM for the controllers.
func TestHalfConfiguredSASLStopsStartUp(t *testing.T) {
	const secret = "hunter2-secret"
	plain := `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="` + secret + `" user_admin="` + secret + `";`
	for _, c := range []struct {
		name      string
		overrides []string
		key       string
	}{
		{"GSSAPI by default", []string{"listener.name.sasl_plaintext.plain.sasl.jaas.config=" + plain}, "sasl.enabled.mechanisms"},
		{"no JAAS config", []string{"sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256", "listener.name.sasl_plaintext.plain.sasl.jaas.config=" + plain},
			"listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config"},
		{"JAAS config that does not parse", []string{"sasl.enabled.mechanisms=PLAIN",
			"listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_admin=" + secret}, // no ';'
			"listener.name.sasl_plaintext.plain.sasl.jaas.config"},
		{"inter-broker mechanism not enabled", []string{"sasl.enabled.mechanisms=PLAIN", "listener.name.sasl_plaintext.plain.sasl.jaas.config=" + plain,
			"inter.broker.listener.name=SASL_PLAINTEXT", "sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512"}, "sasl.mechanism.inter.broker.protocol"},
		{"JWKS file missing", []string{"sasl.enabled.mechanisms=OAUTHBEARER",
			"listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
			"listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
			"sasl.oauthbearer.jwks.endpoint.url=file://" + filepath.Join(t.TempDir(), "missing.json")}, "sasl.oauthbearer.jwks.endpoint.url"},
		{"SCRAM for the controllers", []string{"sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256", "listener.name.sasl_plaintext.plain.sasl.jaas.config=" + plain,
			"listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;",
			"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT",
			"listener.name.controller.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"admin\" password=\"" + secret + "\";",
			"listener.name.controller.plain.sasl.jaas.config=" + plain,
			"sasl.mechanism.controller.protocol=SCRAM-SHA-256"}, "sasl.mechanism.controller.protocol"},
	} {
		ports, err := testbin.FreePorts(3)
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"server", "--override", "log.dirs=" + t.TempDir(),
			"--override", "listeners=PLAINTEXT://127.0.0.1:" + itoa(ports[0]) + ",SASL_PLAINTEXT://127.0.0.1:" + itoa(ports[1]) + ",CONTROLLER://127.0.0.1:" + itoa(ports[2]),
			"--override", "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
			"--override", "controller.quorum.voters=1@127.0.0.1:" + itoa(ports[2])}
		for _, o := range c.overrides {
			args = append(args, "--override", o)
		}
		proc := testbin.StartProcess(t, c.name, binaryPath, args...)
		select {
		case <-proc.Done():
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: still running", c.name)
		}
		logs := proc.Logs()
		if !strings.Contains(logs, c.key) || strings.Contains(logs, secret) {
			t.Errorf("%s: want a message naming %s and no password:\n%s", c.name, c.key, logs)
		}
	}
}
