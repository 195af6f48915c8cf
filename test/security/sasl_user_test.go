package security

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/sluice-io/sluice/internal/testutil"
)

// A user `sluice user create` stores logs in with SCRAM-SHA-256 and -512
// over SASL_SSL; after `sluice user delete` it is refused.
func TestUserCreatedWithCLILogsIn(t *testing.T) {
	s := startSASLServer(t)
	sluice := func(stdin string, args ...string) {
		t.Helper()
		cmd := exec.Command(binaryPath, append(args, "--brokers", s.plainAddr)...)
		cmd.Stdin = strings.NewReader(stdin)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("sluice %v: %v\n%s", args, err, out)
		}
	}
	sluice("carol-secret-5\n", "user", "create", "carol", "--password-stdin")
	tlsOpt := kgo.DialTLSConfig(s.sslTLS)
	for _, m := range []struct {
		name string
		opt  kgo.Opt
	}{
		{"SCRAM-SHA-256", kgo.SASL(scram.Auth{User: "carol", Pass: "carol-secret-5"}.AsSha256Mechanism())},
		{"SCRAM-SHA-512", kgo.SASL(scram.Auth{User: "carol", Pass: "carol-secret-5"}.AsSha512Mechanism())},
	} {
		testutil.EventuallyNoError(t, 10*time.Second, func() error {
			return metadataWith(t, s.sslAddr, nil, tlsOpt, m.opt)
		}, "carol logs in with %s", m.name)
	}
	sluice("", "user", "delete", "carol")
	testutil.EventuallyNoError(t, 10*time.Second, func() error {
		if err := metadataWith(t, s.sslAddr, nil, tlsOpt, kgo.SASL(scram.Auth{User: "carol", Pass: "carol-secret-5"}.AsSha256Mechanism())); err == nil {
			return errAccepted
		}
		return nil
	}, "carol refused once deleted")
}

// The sluice commands reach a SASL_SSL listener with Kafka's client
// properties (--command-config): `sluice user create` as the PLAIN admin
// over TLS, the new user then logs in with SCRAM; a wrong admin password
// fails with Kafka's authentication error and never shows the password.
func TestUserCommandOverSASLSSL(t *testing.T) {
	s := startSASLServer(t)
	props := func(password string) string {
		path := filepath.Join(t.TempDir(), "client.properties")
		text := "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n" +
			`sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="` + password + `";` + "\n" +
			"ssl.truststore.type=PEM\nssl.truststore.location=" + s.caFile + "\n"
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	run := func(stdin, config string, args ...string) (string, error) {
		cmd := exec.Command(binaryPath, append(args, "--brokers", s.sslAddr, "--command-config", config, "--timeout", "10s")...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("dave-secret-5\n", props(adminPassword), "user", "create", "dave", "--password-stdin", "-m", "SCRAM-SHA-512"); err != nil {
		t.Fatalf("sluice user create over SASL_SSL: %v\n%s", err, out)
	}
	testutil.EventuallyNoError(t, 10*time.Second, func() error {
		return metadataWith(t, s.sslAddr, scram.Auth{User: "dave", Pass: "dave-secret-5"}.AsSha512Mechanism(), kgo.DialTLSConfig(s.sslTLS))
	}, "dave logs in")
	out, err := run("", props("not-the-admin-password"), "user", "list")
	if err == nil || !strings.Contains(out, "SASL_AUTHENTICATION_FAILED") || strings.Contains(out, "not-the-admin-password") {
		t.Fatalf("a wrong admin password: %v\n%s", err, out)
	}
}
