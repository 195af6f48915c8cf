package security

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/auth/tlsconf/tlstest"
	"github.com/sluice-io/sluice/internal/testbin"
	"github.com/sluice-io/sluice/internal/testutil"
)

// commandConfigServer serves an SSL listener (no client certificate), an
// MTLS listener (ssl.client.auth=required, the CN as the principal) and a
// SASL_SSL listener (SCRAM-SHA-512) under the StandardAuthorizer with
// User:admin a super user.
type commandConfigServer struct {
	*testbin.Server
	pki                    *pki
	ssl, mtls, saslSSL     string
	caPEM, truststoreJKS   string
	adminKeystore12        string
	adminKeystorePEMInFile string
}

func startCommandConfigServer(t *testing.T) *commandConfigServer {
	t.Helper()
	p := newPKI(t)
	ports, err := testbin.FreePorts(5)
	if err != nil {
		t.Fatal(err)
	}
	addr := func(i int) string { return fmt.Sprintf("127.0.0.1:%d", ports[i]) }
	s := &commandConfigServer{pki: p, ssl: addr(1), mtls: addr(2), saslSSL: addr(3)}
	overrides := append(p.brokerSSL(t, "none"),
		fmt.Sprintf("listeners=PLAINTEXT://%s,SSL://%s,MTLS://%s,SASL_SSL://%s,CONTROLLER://%s", addr(0), s.ssl, s.mtls, s.saslSSL, addr(4)),
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL,SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT",
		"listener.name.mtls.ssl.client.auth=required",
		"ssl.principal.mapping.rules=RULE:^CN=([a-z]+),.*$/$1/L,DEFAULT",
		"sasl.enabled.mechanisms=SCRAM-SHA-512",
		"listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;",
		"connection.failed.authentication.delay.ms=50",
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users=User:admin")
	s.Server = testbin.StartServer(t, binaryPath, testbin.ServerConfig{
		DataDir: t.TempDir(), ClientPort: ports[0], ControllerPort: ports[4], Overrides: overrides,
	})
	s.caPEM = s.write(t, "ca.pem", p.ca.CertPEM())
	s.truststoreJKS = p.writeTruststore(t, tlstest.JKS)
	admin := p.issue(t, tlstest.LeafOptions{Subject: "CN=admin,OU=ops"})
	data, err := admin.Keystore(tlstest.PKCS12, storePassword, "")
	if err != nil {
		t.Fatal(err)
	}
	s.adminKeystore12 = s.write(t, "admin.p12", data)
	s.adminKeystorePEMInFile = s.write(t, "admin.pem", append(admin.KeyPEM(), admin.ChainPEM()...))
	return s
}

func (s *commandConfigServer) write(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(s.pki.dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// properties writes a client properties file of lines.
func (s *commandConfigServer) properties(t *testing.T, lines ...string) string {
	t.Helper()
	return s.write(t, fmt.Sprintf("client-%d.properties", time.Now().UnixNano()), []byte(strings.Join(lines, "\n")+"\n"))
}

func scramJAAS(user, password string) string {
	return `sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="` + user + `" password="` + password + `";`
}

// sluiceCLI runs the sluice binary against addr with --command-config
// config, bounded so that a hang fails the test instead of blocking it.
func sluiceCLI(t *testing.T, addr, config, stdin string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binaryPath, append(args, "--brokers", addr, "--command-config", config, "--timeout", "10s")...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("sluice %v did not finish within 40s:\n%s", args, out)
	}
	return string(out), err
}

// The sluice commands with Kafka's client properties against real SSL,
// mTLS and SASL_SSL listeners under the StandardAuthorizer: the mTLS super
// user (a PKCS12 keystore) creates a topic, ACLs and SCRAM users; those
// users then work over SASL_SSL (the ACLs applied to them), the SSL
// listener answers an anonymous client with a JKS truststore; a
// missing trust, a missing client certificate and a wrong password fail
// with a clear error and a non-zero exit, the password never shown.
func TestCommandConfigSecuredListeners(t *testing.T) {
	s := startCommandConfigServer(t)
	must := func(addr, config, stdin string, args ...string) string {
		t.Helper()
		out, err := sluiceCLI(t, addr, config, stdin, args...)
		if err != nil {
			t.Fatalf("sluice %v: %v\n%s", args, err, out)
		}
		return out
	}
	mtlsAdmin := s.properties(t, "security.protocol=SSL",
		"ssl.keystore.type=PKCS12", "ssl.keystore.location="+s.adminKeystore12, "ssl.keystore.password="+storePassword,
		"ssl.truststore.type=PEM", "ssl.truststore.location="+s.caPEM, "client.id=ignored-by-sluice")
	must(s.mtls, mtlsAdmin, "", "topic", "create", "orders", "-p", "1", "-r", "1")
	must(s.mtls, mtlsAdmin, "", "topic", "create", "payroll", "-p", "1", "-r", "1")
	must(s.mtls, mtlsAdmin, "", "acl", "create", "--allow-principal", "User:alice", "--operation", "Read", "--operation", "Write", "--topic", "orders")
	if out := must(s.mtls, mtlsAdmin, "", "acl", "list", "--principal", "User:alice"); !strings.Contains(out, "orders") || !strings.Contains(out, "User:alice") {
		t.Errorf("acl list over mTLS:\n%s", out)
	}
	must(s.mtls, mtlsAdmin, "admin-scram-pw\n", "user", "create", "admin", "--password-stdin", "-m", "SCRAM-SHA-512")
	must(s.mtls, mtlsAdmin, "alice-scram-pw\n", "user", "create", "alice", "--password-stdin", "-m", "SCRAM-SHA-512")

	// The keystore as a PEM file, the truststore as JKS.
	mtlsPEM := s.properties(t, "security.protocol=SSL",
		"ssl.keystore.type=PEM", "ssl.keystore.location="+s.adminKeystorePEMInFile,
		"ssl.truststore.type=JKS", "ssl.truststore.location="+s.truststoreJKS, "ssl.truststore.password="+storePassword)
	if out := must(s.mtls, mtlsPEM, "", "topic", "list"); !strings.Contains(out, "orders") || !strings.Contains(out, "payroll") {
		t.Errorf("topic list over mTLS with a PEM keystore:\n%s", out)
	}

	scram := func(user, password string) string {
		return s.properties(t, "security.protocol=SASL_SSL", "sasl.mechanism=SCRAM-SHA-512", scramJAAS(user, password),
			"ssl.truststore.type=PEM", "ssl.truststore.location="+s.caPEM)
	}
	admin, alice := scram("admin", "admin-scram-pw"), scram("alice", "alice-scram-pw")
	testutil.EventuallyNoError(t, 15*time.Second, func() error {
		_, err := sluiceCLI(t, s.saslSSL, admin, "", "topic", "list")
		return err
	}, "the SCRAM admin logs in over SASL_SSL")
	if out := must(s.saslSSL, admin, "", "acl", "list"); !strings.Contains(out, "User:alice") {
		t.Errorf("acl list over SASL_SSL:\n%s", out)
	}
	if out := must(s.saslSSL, alice, "", "topic", "list"); !strings.Contains(out, "orders") || strings.Contains(out, "payroll") {
		t.Errorf("alice's topic list (READ on orders only):\n%s", out)
	}
	must(s.saslSSL, alice, "one\ntwo\n", "produce", "orders")
	if out := must(s.saslSSL, alice, "", "consume", "orders", "-o", "start", "-n", "2"); !strings.Contains(out, "one") || !strings.Contains(out, "two") {
		t.Errorf("alice consumes:\n%s", out)
	}
	if out, err := sluiceCLI(t, s.saslSSL, alice, "", "topic", "create", "mine"); err == nil || !strings.Contains(out, "AUTHORIZATION_FAILED") {
		t.Errorf("alice creating a topic: %v\n%s", err, out)
	}

	// The SSL listener: anonymous, the broker's certificate checked.
	sslAnon := s.properties(t, "security.protocol=SSL", "ssl.truststore.location="+s.truststoreJKS, "ssl.truststore.password="+storePassword)
	must(s.ssl, sslAnon, "", "cluster", "brokers")

	for name, c := range map[string]struct {
		addr, config, want string
	}{
		"a wrong SCRAM password": {s.saslSSL, scram("alice", "not-alice-pw"), "SASL_AUTHENTICATION_FAILED"},
		"an unknown CA":          {s.ssl, s.properties(t, "security.protocol=SSL"), "certificate"},
		"no client certificate":  {s.mtls, s.properties(t, "security.protocol=SSL", "ssl.truststore.type=PEM", "ssl.truststore.location="+s.caPEM), "cannot reach brokers"},
		"a wrong store password": {s.mtls, s.properties(t, "security.protocol=SSL", "ssl.keystore.type=PKCS12", "ssl.keystore.location="+s.adminKeystore12, "ssl.keystore.password=not-the-store-pw"), "ssl.keystore"},
		"plaintext to SASL_SSL":  {s.saslSSL, s.properties(t, "security.protocol=SASL_PLAINTEXT", "sasl.mechanism=SCRAM-SHA-512", scramJAAS("alice", "alice-scram-pw")), "cannot reach brokers"},
	} {
		start := time.Now()
		out, err := sluiceCLI(t, c.addr, c.config, "", "topic", "list")
		if err == nil || !strings.Contains(out, c.want) {
			t.Errorf("%s: %v, want %q in\n%s", name, err, c.want, out)
		}
		for _, secret := range []string{"not-alice-pw", "alice-scram-pw", "not-the-store-pw", storePassword} {
			if strings.Contains(out, secret) {
				t.Errorf("%s: the output shows a password:\n%s", name, out)
			}
		}
		t.Logf("%s: exit %v after %s: %s", name, err, time.Since(start).Round(time.Millisecond), strings.TrimSpace(out))
	}
}

// OAUTHBEARER and PLAIN from --command-config: the unsecured token made
// from the login module's options logs in where the broker validates
// unsecured tokens (SASL_PLAINTEXT here) and is refused where it wants
// signed JWTs (SASL_SSL); options that make no principal fail before any
// connection.
func TestCommandConfigOAuthBearerAndPlain(t *testing.T) {
	s := startSASLServer(t)
	write := func(lines ...string) string {
		path := filepath.Join(t.TempDir(), "client.properties")
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	oauthJAAS := func(options string) string {
		return "sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required " + options + ";"
	}
	unsecured := write("security.protocol=SASL_PLAINTEXT", "sasl.mechanism=OAUTHBEARER",
		oauthJAAS(`unsecuredLoginStringClaim_sub="alice" unsecuredLoginLifetimeSeconds="600"`))
	if out, err := sluiceCLI(t, s.saslAddr, unsecured, "", "topic", "create", "tokens", "-p", "1"); err != nil {
		t.Fatalf("topic create with an unsecured token: %v\n%s", err, out)
	}
	plain := write("security.protocol=SASL_PLAINTEXT", "sasl.mechanism=PLAIN",
		`sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="`+alicePassword+`";`)
	if out, err := sluiceCLI(t, s.saslAddr, plain, "", "topic", "list"); err != nil || !strings.Contains(out, "tokens") {
		t.Errorf("topic list with PLAIN: %v\n%s", err, out)
	}
	toSSL := write("security.protocol=SASL_SSL", "sasl.mechanism=OAUTHBEARER", oauthJAAS(`unsecuredLoginStringClaim_sub="alice"`),
		"ssl.truststore.type=PEM", "ssl.truststore.location="+s.caFile)
	if out, err := sluiceCLI(t, s.sslAddr, toSSL, "", "topic", "list"); err == nil || !strings.Contains(out, "SASL_AUTHENTICATION_FAILED") {
		t.Errorf("an unsecured token to the JWT-validating listener: %v\n%s", err, out)
	}
	noSub := write("security.protocol=SASL_PLAINTEXT", "sasl.mechanism=OAUTHBEARER", oauthJAAS(`unsecuredLoginStringClaim_name="alice"`))
	if out, err := sluiceCLI(t, s.saslAddr, noSub, "", "topic", "list"); err == nil || !strings.Contains(out, "no principal claim sub") {
		t.Errorf("a token without its principal claim: %v\n%s", err, out)
	}
}

// ssl.endpoint.identification.algorithm from --command-config: by default
// (https) a broker certificate that does not name the host it is reached
// at is refused; set empty, only the chain is checked, so a certificate of
// another CA is still refused.
func TestCommandConfigEndpointIdentification(t *testing.T) {
	p := newPKI(t)
	p.broker = p.issue(t, tlstest.LeafOptions{Subject: "CN=broker,OU=brokers,O=Sluice", Hosts: []string{"kafka.test"}})
	s := startSSLServer(t, p.brokerSSL(t, "none")...)
	ca := filepath.Join(p.dir, "ca.pem")
	if err := os.WriteFile(ca, p.ca.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(lines ...string) string {
		path := filepath.Join(t.TempDir(), "client.properties")
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	trust := []string{"security.protocol=SSL", "ssl.truststore.type=PEM", "ssl.truststore.location=" + ca}
	if out, err := sluiceCLI(t, s.sslAddr, write(trust...), "", "topic", "list"); err == nil || !strings.Contains(out, "failed to verify certificate") || strings.Contains(out, "unknown authority") {
		t.Errorf("a certificate for kafka.test reached at 127.0.0.1: %v\n%s", err, out)
	}
	if out, err := sluiceCLI(t, s.sslAddr, write(append(trust, "ssl.endpoint.identification.algorithm=")...), "", "topic", "list"); err != nil {
		t.Errorf("host name checks off: %v\n%s", err, out)
	}
	other, err := tlstest.NewCA("Other CA")
	if err != nil {
		t.Fatal(err)
	}
	otherFile := filepath.Join(p.dir, "other-ca.pem")
	if err := os.WriteFile(otherFile, other.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	noHost := write("security.protocol=SSL", "ssl.truststore.type=PEM", "ssl.truststore.location="+otherFile, "ssl.endpoint.identification.algorithm=")
	if out, err := sluiceCLI(t, s.sslAddr, noHost, "", "topic", "list"); err == nil || !strings.Contains(out, "unknown authority") {
		t.Errorf("host name checks off, another CA trusted: %v\n%s", err, out)
	}
}
