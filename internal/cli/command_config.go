package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/magiconair/properties"
	"github.com/twmb/franz-go/pkg/kgo"
	kgosasl "github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/sluice-io/sluice/internal/auth/sasl"
	"github.com/sluice-io/sluice/internal/auth/tlsconf"
)

// commandConfigOpts reads a Kafka client properties file, as Kafka's tools
// take with --command-config, into client options: security.protocol
// (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL), the ssl.* keys (truststore,
// keystore for mTLS, endpoint identification) and sasl.mechanism (PLAIN,
// SCRAM-SHA-256, SCRAM-SHA-512 with the username and password of
// sasl.jaas.config; OAUTHBEARER with an unsecured token). Another
// security key is refused (checkCommandConfigKeys). Errors name keys,
// never values.
func commandConfigOpts(path string) ([]kgo.Opt, error) {
	opts, dial, err := commandConfigParts(path)
	if err != nil {
		return nil, err
	}
	if dial != nil {
		opts = append(opts, kgo.Dialer(dial))
	}
	return opts, nil
}

// dialFunc dials a broker, as net.Dialer's DialContext.
type dialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// commandConfigParts is commandConfigOpts with the TLS dialer (nil for
// PLAINTEXT and SASL_PLAINTEXT) apart from the other options, so a caller
// can wrap the connections it makes.
func commandConfigParts(path string) ([]kgo.Opt, dialFunc, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--command-config: %w", err)
	}
	l := &properties.Loader{Encoding: properties.ISO_8859_1, DisableExpansion: true}
	p, err := l.LoadBytes(data)
	if err != nil {
		return nil, nil, fmt.Errorf("--command-config %s: %w", path, err)
	}
	if err := checkCommandConfigKeys(p); err != nil {
		return nil, nil, fmt.Errorf("--command-config %s: %w", path, err)
	}
	protocol := strings.ToUpper(strings.TrimSpace(p.GetString("security.protocol", "PLAINTEXT")))
	var opts []kgo.Opt
	var dial dialFunc
	switch protocol {
	case "PLAINTEXT", "SASL_PLAINTEXT":
	case "SSL", "SASL_SSL":
		st, err := tlsconf.New(tlsconf.Options{Listener: "client", Lookup: func(key string) (string, string, bool) {
			v, ok := p.Get(key)
			return inlinePEM(key, v), key, ok
		}})
		if err != nil {
			return nil, nil, fmt.Errorf("--command-config %s: %w", path, err)
		}
		dial = st.Dial(&net.Dialer{})
	default:
		return nil, nil, fmt.Errorf("--command-config %s: security.protocol %s is not PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", path, protocol)
	}
	if strings.HasPrefix(protocol, "SASL_") {
		m, err := clientMechanism(p)
		if err != nil {
			return nil, nil, fmt.Errorf("--command-config %s: %w", path, err)
		}
		opts = append(opts, kgo.SASL(m))
	}
	return opts, dial, nil
}

// clientMechanism is sasl.mechanism logged in with sasl.jaas.config's one
// login module: its username and password (PLAIN, SCRAM), or the unsecured
// token its options make (OAUTHBEARER, as Kafka's default client login
// callback handler).
func clientMechanism(p *properties.Properties) (kgosasl.Mechanism, error) {
	mech := sasl.Mechanism(strings.ToUpper(strings.TrimSpace(p.GetString(keySASLMechanism, "GSSAPI"))))
	switch mech {
	case sasl.Plain, sasl.ScramSHA256, sasl.ScramSHA512, sasl.OAuthBearer:
	default:
		return nil, fmt.Errorf("sasl.mechanism %s is not supported by the sluice commands (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER)", mech)
	}
	jaas, ok := p.Get(keySASLJAASConfig)
	if !ok {
		return nil, fmt.Errorf("sasl.jaas.config must be set for SASL")
	}
	entry, err := sasl.ParseServerJAASConfig(jaas)
	if err != nil {
		return nil, fmt.Errorf("sasl.jaas.config: %w", err)
	}
	if mech == sasl.OAuthBearer {
		// Checked now, made again at each login so that a long consume
		// re-authenticates with a token not yet expired, as Kafka's
		// clients refresh theirs.
		if _, _, err := unsecuredLoginToken(entry, time.Now()); err != nil {
			return nil, fmt.Errorf("sasl.jaas.config: %w", err)
		}
		return oauth.Oauth(func(context.Context) (oauth.Auth, error) {
			token, ext, err := unsecuredLoginToken(entry, time.Now())
			return oauth.Auth{Token: token, Extensions: ext}, err
		}), nil
	}
	user, okU := entry.Option("username")
	pass, okP := entry.Option("password")
	if !okU || !okP {
		return nil, fmt.Errorf("sasl.jaas.config needs the username and password options")
	}
	if v, _ := entry.Option("tokenauth"); strings.EqualFold(strings.TrimSpace(v), "true") {
		return nil, fmt.Errorf("sasl.jaas.config: tokenauth (a delegation token) is not supported by the sluice commands")
	}
	switch mech {
	case sasl.Plain:
		return plain.Auth{User: user, Pass: pass}.AsMechanism(), nil
	case sasl.ScramSHA256:
		return scram.Auth{User: user, Pass: pass}.AsSha256Mechanism(), nil
	}
	return scram.Auth{User: user, Pass: pass}.AsSha512Mechanism(), nil
}
