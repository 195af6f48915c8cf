// Package tlsconf builds TLS for a listener from Kafka's ssl.* keys, as
// Kafka's SslFactory does: the keystore (JKS, PKCS12 or PEM, in a file or
// inline) the listener serves and the broker's own clients present, the
// truststore (the same types) that verifies peers, ssl.client.auth,
// ssl.enabled.protocols, ssl.cipher.suites, hostname verification for the
// broker's own clients (ssl.endpoint.identification.algorithm), and the
// principal of a client certificate through ssl.principal.mapping.rules
// (Kafka's SslPrincipalMapper). Keystore and truststore files are read
// again when they change, so certificates rotate without a restart.
//
// The values come through Options.Lookup with the listener's prefix
// already applied (listener.name.<listener>.ssl.x over ssl.x, Kafka's
// valuesWithPrefixOverride), so this package reads no configuration file
// and never prints a password.
package tlsconf

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-io/sluice/internal/auth"
	"github.com/sluice-io/sluice/internal/clock"
)

// DefaultReloadCheckInterval is how often, at most, a handshake looks for
// changed keystore and truststore files.
const DefaultReloadCheckInterval = time.Second

// DefaultHandshakeTimeout bounds a handshake the broker's own clients
// start when their context has no deadline.
const DefaultHandshakeTimeout = 10 * time.Second

// Options configure a Store.
type Options struct {
	// Listener names the listener, for messages.
	Listener string
	// Lookup returns a key's effective value for the listener (Kafka's
	// ssl.* names, unprefixed), the name it was set under (for messages)
	// and whether it has a value.
	Lookup func(key string) (value, setAs string, ok bool)
	// Serve marks a listener this node serves: it needs a keystore, and
	// ssl.client.auth=required needs a truststore. A listener the node only
	// connects to (a broker's controller listener) needs neither.
	Serve bool
	// ReloadCheckInterval is how often at most the files are checked for a
	// change; zero means DefaultReloadCheckInterval.
	ReloadCheckInterval time.Duration
	Clock               clock.Clock
	Logger              *slog.Logger
}

// Store is a listener's TLS: the current key material, read again when
// its files change, and what is derived from the settings. It is safe for
// concurrent use.
type Store struct {
	s        *settings
	mapper   *PrincipalMapper
	clock    clock.Clock
	log      *slog.Logger
	interval time.Duration

	cur       atomic.Pointer[material]
	nextCheck atomic.Int64 // Unix nanoseconds of the next file check
	reloading sync.Mutex
	// failed is the file state a reload last failed on, so a bad file is
	// reported once, not at every handshake (guarded by reloading).
	failed []fileStamp
}

// New reads the settings and the stores; an error names the key at fault
// and never holds a password.
func New(o Options) (*Store, error) {
	if o.Lookup == nil {
		return nil, errors.New("tlsconf: no Lookup")
	}
	s, err := readSettings(o)
	if err != nil {
		return nil, err
	}
	mapper, err := ParseMappingRules(s.rules)
	if err != nil {
		return nil, s.errorf(KeyPrincipalMappingRules, "%v", err)
	}
	if o.Serve {
		if !s.keystore.configured() {
			return nil, s.errorf(KeyKeystoreLocation, "missing: an SSL listener needs a keystore (%s, or %s and %s with %s=PEM)",
				s.name(KeyKeystoreLocation), s.name(KeyKeystoreCertChain), s.name(KeyKeystoreKey), s.name(KeyKeystoreType))
		}
		if s.clientAuth == tls.RequireAndVerifyClientCert && !s.truststore.configured() {
			return nil, s.errorf(KeyTruststoreLocation, "missing: %s=required needs a truststore to verify client certificates (%s or %s)",
				s.name(KeyClientAuth), s.name(KeyTruststoreLocation), s.name(KeyTruststoreCertificates))
		}
	}
	m, err := s.load()
	if err != nil {
		return nil, err
	}
	st := &Store{s: s, mapper: mapper, clock: o.Clock, log: o.Logger, interval: o.ReloadCheckInterval}
	if st.clock == nil {
		st.clock = clock.Real{}
	}
	if st.log == nil {
		st.log = slog.New(slog.DiscardHandler)
	}
	st.log = st.log.With("listener", o.Listener)
	if st.interval <= 0 {
		st.interval = DefaultReloadCheckInterval
	}
	st.cur.Store(m)
	st.nextCheck.Store(st.clock.Now().Add(st.interval).UnixNano())
	return st, nil
}

// ServerConfig is the listener's server side: each handshake takes the
// current keystore and truststore.
func (st *Store) ServerConfig() *tls.Config {
	return &tls.Config{
		MinVersion: st.s.minVersion,
		MaxVersion: st.s.maxVersion,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return st.current().server, nil
		},
	}
}

// ClientConfig is the broker's own client side towards a peer listener
// at serverName: the keystore as client certificate when the peer asks,
// the truststore, and hostname verification unless
// ssl.endpoint.identification.algorithm is empty.
func (st *Store) ClientConfig(serverName string) *tls.Config {
	m := st.current()
	c := &tls.Config{
		MinVersion:   st.s.minVersion,
		MaxVersion:   st.s.maxVersion,
		CipherSuites: st.s.ciphers,
		RootCAs:      m.roots,
		Certificates: m.certs,
		ServerName:   serverName,
	}
	if !st.s.verifyHost {
		// The chain is still verified, the name is not.
		c.InsecureSkipVerify = true
		c.VerifyConnection = func(cs tls.ConnectionState) error { return verifyChain(cs, m.roots) }
	}
	return c
}

func verifyChain(cs tls.ConnectionState, roots *x509.CertPool) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("tls: the server sent no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{
		Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	return err
}

// Dial returns a dial function for the broker's own clients (kgo.Dialer,
// the quorum's transport): TCP with d, then the TLS handshake, bounded by
// the context's deadline or DefaultHandshakeTimeout.
func (st *Store) Dial(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, DefaultHandshakeTimeout)
			defer cancel()
		}
		raw, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		tc := tls.Client(raw, st.ClientConfig(host))
		if err := tc.HandshakeContext(ctx); err != nil {
			raw.Close()
			return nil, fmt.Errorf("TLS handshake with %s: %w", addr, err)
		}
		return tc, nil
	}
}

// Principal is the principal of a completed server handshake: the client
// certificate's distinguished name through ssl.principal.mapping.rules,
// or User:ANONYMOUS without a client certificate, as Kafka's default
// principal builder gives. An error (no rule matched) fails the
// connection, as Kafka fails its authentication.
func (st *Store) Principal(cs tls.ConnectionState) (auth.Principal, error) {
	if len(cs.PeerCertificates) == 0 {
		return auth.Anonymous, nil
	}
	dn, err := DistinguishedName(cs.PeerCertificates[0].RawSubject)
	if err != nil {
		return auth.Principal{}, err
	}
	name, err := st.mapper.Name(dn)
	if err != nil {
		return auth.Principal{}, err
	}
	return auth.User(name), nil
}

// ClientAuth is the listener's ssl.client.auth: none, requested or
// required.
func (st *Store) ClientAuth() string { return st.s.clientAuthName }
