package security

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/twmb/franz-go/pkg/kgo"
	kgosasl "github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/sluice-io/sluice/internal/testbin"
	"github.com/sluice-io/sluice/internal/testutil"
)

// saslServer is a single-node server with a PLAINTEXT listener (the
// start-up probe and the admin that creates SCRAM users), a SASL_PLAINTEXT
// listener (PLAIN, SCRAM, OAUTHBEARER with unsecured tokens), a SASL_SSL
// listener (PLAIN, SCRAM, OAUTHBEARER with signed JWTs checked against a
// JWKS file) and the debug listener.
type saslServer struct {
	*testbin.Server
	plainAddr string
	saslAddr  string
	sslAddr   string
	debugAddr string
	issuer    *jwtIssuer
	// sslTLS trusts the broker's certificate; caFile holds it in PEM.
	sslTLS *tls.Config
	caFile string
}

// jwtIssuer signs RS256 tokens with a key the server's JWKS file holds.
type jwtIssuer struct {
	key  *rsa.PrivateKey
	jwks string
}

const (
	jwtKeyID    = "sluice-test-key"
	jwtAudience = "sluice"
	jwtIssuerID = "https://issuer.test"
)

func newJWTIssuer(t *testing.T) *jwtIssuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: jwtKeyID, Algorithm: "RS256", Use: "sig"}}}
	data, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return &jwtIssuer{key: key, jwks: path}
}

// token signs claims for sub with key (the issuer's when nil).
func (j *jwtIssuer) token(t *testing.T, sub string, exp time.Time, audience string, key *rsa.PrivateKey) string {
	t.Helper()
	if key == nil {
		key = j.key
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", jwtKeyID))
	if err != nil {
		t.Fatal(err)
	}
	claims := jwt.Claims{Subject: sub, Issuer: jwtIssuerID, Audience: jwt.Audience{audience},
		IssuedAt: jwt.NewNumericDate(time.Now().Add(-time.Minute)), Expiry: jwt.NewNumericDate(exp)}
	tok, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

const (
	adminPassword = "admin-secret-7"
	alicePassword = "alice-secret-7"
)

func startSASLServer(t *testing.T, overrides ...string) *saslServer {
	t.Helper()
	p := newPKI(t)
	ports, err := testbin.FreePorts(5)
	if err != nil {
		t.Fatal(err)
	}
	s := &saslServer{
		plainAddr: fmt.Sprintf("127.0.0.1:%d", ports[0]),
		saslAddr:  fmt.Sprintf("127.0.0.1:%d", ports[1]),
		sslAddr:   fmt.Sprintf("127.0.0.1:%d", ports[2]),
		debugAddr: fmt.Sprintf("127.0.0.1:%d", ports[4]),
		issuer:    newJWTIssuer(t),
	}
	plainJAAS := `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="` + adminPassword +
		`" user_admin="` + adminPassword + `" user_alice="` + alicePassword + `";`
	scramJAAS := `org.apache.kafka.common.security.scram.ScramLoginModule required;`
	oauthJAAS := `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;`
	base := []string{
		fmt.Sprintf("listeners=PLAINTEXT://%s,SASL_PLAINTEXT://%s,SASL_SSL://%s,CONTROLLER://127.0.0.1:%d", s.plainAddr, s.saslAddr, s.sslAddr, ports[3]),
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT",
		"sluice.debug.listener=" + s.debugAddr,
		"sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER",
		"listener.name.sasl_ssl.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
		"listener.name.sasl_ssl.sasl.oauthbearer.jwks.endpoint.url=file://" + s.issuer.jwks,
		"sasl.oauthbearer.expected.audience=" + jwtAudience,
		"sasl.oauthbearer.expected.issuer=" + jwtIssuerID,
		"connection.failed.authentication.delay.ms=50",
	}
	for _, l := range []string{"sasl_plaintext", "sasl_ssl"} {
		base = append(base,
			"listener.name."+l+".plain.sasl.jaas.config="+plainJAAS,
			"listener.name."+l+".scram-sha-256.sasl.jaas.config="+scramJAAS,
			"listener.name."+l+".scram-sha-512.sasl.jaas.config="+scramJAAS,
			"listener.name."+l+".oauthbearer.sasl.jaas.config="+oauthJAAS)
	}
	base = append(base, p.brokerSSL(t, "none")...)
	s.Server = testbin.StartServer(t, binaryPath, testbin.ServerConfig{
		DataDir: t.TempDir(), ClientPort: ports[0], ControllerPort: ports[3], Overrides: append(base, overrides...),
	})
	s.sslTLS = p.clientTLS(nil)
	s.caFile = filepath.Join(p.dir, "ca.pem")
	if err := os.WriteFile(s.caFile, p.ca.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *saslServer) metric(t *testing.T, name, labels string) float64 {
	t.Helper()
	return (&sslServer{debugAddr: s.debugAddr}).metric(t, name, labels)
}

// addScramUser gives user a credential for each SCRAM mechanism with kadm
// over the PLAINTEXT listener.
func (s *saslServer) addScramUser(t *testing.T, user, password string) {
	t.Helper()
	adm := kadm.NewClient(client(t, s.plainAddr))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Kafka refuses one user twice in a request: one mechanism a request.
	for _, m := range []kadm.ScramMechanism{kadm.ScramSha256, kadm.ScramSha512} {
		res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: user, Mechanism: m, Iterations: 4096, Password: password}})
		if err == nil {
			err = res.Error()
		}
		if err != nil {
			t.Fatalf("creating SCRAM user %s: %v", user, err)
		}
	}
	// The listeners authenticate against the published image.
	testutil.EventuallyNoError(t, 10*time.Second, func() error {
		d, err := adm.DescribeUserSCRAMs(ctx, user)
		if err != nil {
			return err
		}
		if n := len(d[user].CredInfos); n != 2 {
			return fmt.Errorf("%d credentials described", n)
		}
		return nil
	}, "user %s's credentials published", user)
}

func failedLabels(listener, mech, reason string) string {
	return fmt.Sprintf(`listener=%q,mechanism=%q,reason=%q`, listener, mech, reason)
}

// franz-go at its defaults with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and
// OAUTHBEARER (unsecured tokens on SASL_PLAINTEXT, signed JWTs checked
// against the JWKS file on SASL_SSL) produces and consumes; SCRAM users are
// created with kadm's AlterUserScramCredentials.
func TestFranzGoOverSASL(t *testing.T) {
	s := startSASLServer(t)
	s.addScramUser(t, "alice", alicePassword)
	unsecured := unsecuredJWT(t, "alice", time.Now().Add(time.Hour))
	signed := s.issuer.token(t, "alice", time.Now().Add(time.Hour), jwtAudience, nil)
	tlsOpt := kgo.DialTLSConfig(s.sslTLS)
	for _, c := range []struct {
		name     string
		addr     string
		listener string
		mech     kgosasl.Mechanism
		opts     []kgo.Opt
	}{
		{"PLAIN", s.saslAddr, "SASL_PLAINTEXT", plain.Auth{User: "alice", Pass: alicePassword}.AsMechanism(), nil},
		{"SCRAM-SHA-256", s.saslAddr, "SASL_PLAINTEXT", scram.Auth{User: "alice", Pass: alicePassword}.AsSha256Mechanism(), nil},
		{"SCRAM-SHA-512", s.saslAddr, "SASL_PLAINTEXT", scram.Auth{User: "alice", Pass: alicePassword}.AsSha512Mechanism(), nil},
		{"OAUTHBEARER", s.saslAddr, "SASL_PLAINTEXT", oauth.Auth{Token: unsecured}.AsMechanism(), nil},
		{"PLAIN", s.sslAddr, "SASL_SSL", plain.Auth{User: "alice", Pass: alicePassword}.AsMechanism(), []kgo.Opt{tlsOpt}},
		{"SCRAM-SHA-256", s.sslAddr, "SASL_SSL", scram.Auth{User: "alice", Pass: alicePassword}.AsSha256Mechanism(), []kgo.Opt{tlsOpt}},
		{"SCRAM-SHA-512", s.sslAddr, "SASL_SSL", scram.Auth{User: "alice", Pass: alicePassword}.AsSha512Mechanism(), []kgo.Opt{tlsOpt}},
		{"OAUTHBEARER", s.sslAddr, "SASL_SSL", oauth.Auth{Token: signed}.AsMechanism(), []kgo.Opt{tlsOpt}},
	} {
		topic := strings.ToLower(c.listener + "-" + c.name)
		if err := produceAndConsume(t, c.addr, topic, 20, append(c.opts, kgo.SASL(c.mech))...); err != nil {
			t.Errorf("%s over %s: %v", c.name, c.listener, err)
		}
		labels := fmt.Sprintf(`listener=%q,mechanism=%q`, c.listener, c.name)
		if n := s.metric(t, "sluice_successful_authentication_total", labels); n < 2 {
			t.Errorf("%s over %s: %v authentications counted, want at least 2 (producer and consumer)", c.name, c.listener, n)
		}
	}
}

// unsecuredJWT is an unsecured token (alg none) for sub, as Kafka's
// OAuthBearerUnsecuredLoginCallbackHandler makes them.
func unsecuredJWT(t *testing.T, sub string, exp time.Time) string {
	t.Helper()
	enc := func(v map[string]any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(map[string]any{"alg": "none"}) + "." + enc(map[string]any{"sub": sub, "iat": time.Now().Unix() - 60, "exp": exp.Unix()}) + "."
}
