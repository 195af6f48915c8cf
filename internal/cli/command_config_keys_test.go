package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/auth/sasl"
)

func writeProperties(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "client.properties")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A security key the commands do not act on is refused by name; Kafka's
// other client keys are ignored.
func TestCommandConfigKeys(t *testing.T) {
	jaas := `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="hunter2";` + "\n"
	for _, ok := range []string{
		"client.id=tool\nrequest.timeout.ms=30000\nacks=all\nsecurity.protocol=PLAINTEXT\n",
		"security.protocol=SSL\nssl.protocol=TLSv1.3\nssl.enabled.protocols=TLSv1.2,TLSv1.3\nssl.endpoint.identification.algorithm=\n",
		"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n" + jaas,
	} {
		if _, err := commandConfigOpts(writeProperties(t, ok)); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for text, want := range map[string]string{
		"security.protocol=SSL\nssl.truststore.locaton=/tmp/x.jks\n":                                                               "ssl.truststore.locaton is not supported",
		"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.kerberos.service.name=kafka\n" + jaas:                        "sasl.kerberos.service.name is not supported",
		"sasl.login.callback.handler.class=x.Y\n":                                                                                  "sasl.login.callback.handler.class is not supported",
		"security.protocol=SSL\nssl.client.auth=required\n":                                                                        "ssl.client.auth is not supported",
		"security.protocol=SSL\nssl.protocol=SSLv3\n":                                                                              "ssl.protocol",
		"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n" + strings.Replace(jaas, `";`, `" tokenauth="true";`, 1): "tokenauth",
		"security.protocol=SASL_SSL\nsasl.mechanism=GSSAPI\n" + jaas:                                                               "sasl.mechanism GSSAPI is not supported",
	} {
		_, err := commandConfigOpts(writeProperties(t, text))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: the error shows the password: %v", text, err)
		}
	}
	two := "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=" +
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="hunter2"; ` +
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="v" password="hunter2";` + "\n"
	if _, err := commandConfigOpts(writeProperties(t, two)); err == nil || !strings.Contains(err.Error(), "2 login modules") {
		t.Errorf("two login modules: %v", err)
	}
}

// The OAUTHBEARER token made from the login module's options is one the
// broker's unsecured validator accepts, with its principal, scope and
// lifetime.
func TestUnsecuredLoginToken(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_123)
	entry := sasl.JAASEntry{LoginModule: sasl.OAuthBearerLoginModule, Flag: "required", Options: map[string]string{
		"unsecuredLoginStringClaim_sub":    "alice",
		"unsecuredLoginListClaim_scope":    ",read,write",
		"unsecuredLoginNumberClaim_level":  "3",
		"unsecuredLoginLifetimeSeconds":    "60",
		"unsecuredLoginExtension_traceId":  "abc",
		"unsecuredLoginPrincipalClaimName": "sub",
	}}
	token, ext, err := unsecuredLoginToken(entry, now)
	if err != nil {
		t.Fatal(err)
	}
	if ext["traceId"] != "abc" || len(ext) != 1 {
		t.Errorf("extensions %v", ext)
	}
	v, err := sasl.NewUnsecuredValidator(sasl.JAASEntry{Options: map[string]string{"unsecuredValidatorRequiredScope": "write"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := v.Validate(token, now.Add(time.Second))
	if err != nil {
		t.Fatalf("the broker's validator refuses the token: %v", err)
	}
	if got.Principal != "alice" || strings.Join(got.Scope, " ") != "read write" || !got.Expiry.Equal(now.Add(time.Minute)) || !got.IssuedAt.Equal(now) {
		t.Errorf("token %+v", got)
	}
	if _, err := v.Validate(token, now.Add(time.Minute)); err == nil {
		t.Error("the token outlives unsecuredLoginLifetimeSeconds")
	}
	for opts, want := range map[string]map[string]string{
		"no principal claim sub":  {"unsecuredLoginStringClaim_name": "alice"},
		"give no token":           {"unsecuredLoginExtension_a": "b"},
		"'exp' claim":             {"unsecuredLoginStringClaim_sub": "a", "unsecuredLoginNumberClaim_exp": "1"},
		"whole number of seconds": {"unsecuredLoginStringClaim_sub": "a", "unsecuredLoginLifetimeSeconds": "soon"},
		"is not a number":         {"unsecuredLoginStringClaim_sub": "a", "unsecuredLoginNumberClaim_n": "x"},
	} {
		if _, _, err := unsecuredLoginToken(sasl.JAASEntry{Options: want}, now); err == nil || !strings.Contains(err.Error(), opts) {
			t.Errorf("%v: %v, want %q", want, err, opts)
		}
	}
}
