package node

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/sluice-io/sluice/internal/api"
	"github.com/sluice-io/sluice/internal/auth/tlsconf"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/console"
	"github.com/sluice-io/sluice/internal/console/web"
)

// webConsoleMechanisms are the SASL mechanisms the console can log in
// with, in order of preference.
func webConsoleMechanisms() []string { return []string{"SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"} }

// appendWebConsole adds the web console's HTTP listener when
// sluice.console.listener is set. The console is a Kafka client of this
// node; its sampler and clients stop when the node's metadata view stops,
// which every stop of the node does.
func (n *Node) appendWebConsole(listeners *[]console.Listener) error {
	key := config.SluiceConsoleListener.Name()
	addr, ok := n.cfg.Raw(config.SluiceConsoleListener)
	if !ok || strings.TrimSpace(addr) == "" {
		return nil
	}
	readOnly, err := n.consoleReadOnly()
	if err != nil {
		return err
	}
	if n.broker == nil {
		return fmt.Errorf("%s=%s: the web console needs a node with the broker role (process.roles=%v)", key, addr, n.cfg.ProcessRoles())
	}
	listener, mechs, tlsCfg, err := n.webConsoleBootstrap()
	if err != nil {
		return fmt.Errorf("%s=%s: %w", key, addr, err)
	}
	wc, err := web.New(web.Options{
		BootstrapFunc:  func() (string, error) { return n.loopbackAddr(listener) },
		DialAddr:       n.consoleDialAddr(listener),
		TLS:            tlsCfg,
		SASLMechanisms: mechs,
		ReadOnly:       readOnly,
		LoopbackHosts:  isLoopback(addr),
		Metrics:        n.history,
		ClientID:       fmt.Sprintf("sluice-console-%d", n.cfg.NodeID()),
		Version:        sluiceVersion(),
		Clock:          n.clk,
		Logger:         n.logger.With("component", "web-console"),
	})
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	if err := wc.Start(); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	go func() {
		<-n.meta.view.Done()
		_ = wc.Close()
	}()
	*listeners = append(*listeners, console.Listener{Key: key, Address: addr, UI: wc.Handler()})
	return nil
}

// ConsoleAddr is the bound address of the web console, or "" when none.
func (n *Node) ConsoleAddr() string { return n.httpAddr(config.SluiceConsoleListener) }

// consoleReadOnly reads sluice.console.read.only (true or false).
func (n *Node) consoleReadOnly() (bool, error) {
	v, ok := n.cfg.Raw(config.SluiceConsoleReadOnly)
	switch v = strings.TrimSpace(v); {
	case !ok || v == "" || strings.EqualFold(v, "false"):
		return false, nil
	case strings.EqualFold(v, "true"):
		return true, nil
	}
	return false, fmt.Errorf("%s=%s: expected true or false", config.SluiceConsoleReadOnly.Name(), v)
}

// webConsoleBootstrap picks the broker listener the console connects to:
// a SASL one when there is one (the cluster authenticates, so the console
// logs its users in and acts as them), plain before TLS, else PLAINTEXT,
// else SSL. Over TLS the console trusts exactly the certificate this node
// serves on that listener (the address is loopback, which the
// certificate need not name); a listener that requires client
// certificates is refused, as the console has none of its own.
func (n *Node) webConsoleBootstrap() (listener string, mechs []string, tlsCfg *tls.Config, err error) {
	controllers := n.cfg.ControllerListenerNames()
	first := map[string]string{}
	for _, l := range n.cfg.Listeners() {
		if slices.Contains(controllers, l.Name) {
			continue
		}
		p := l.Protocol
		if p == "" {
			p = "PLAINTEXT"
		}
		if _, ok := first[p]; !ok {
			first[p] = l.Name
		}
	}
	for _, p := range []string{"SASL_PLAINTEXT", "SASL_SSL", "PLAINTEXT", "SSL"} {
		if listener = first[p]; listener != "" {
			break
		}
	}
	if listener == "" {
		return "", nil, nil, errors.New("the node has no broker listener for the console to connect to")
	}
	if st := n.tls[listener]; st != nil {
		if st.ClientAuth() == "required" {
			return "", nil, nil, fmt.Errorf("listener %s requires client certificates (ssl.client.auth=required), and the console has none", listener)
		}
		tlsCfg = pinnedTLS(st)
	}
	if !strings.HasPrefix(n.cfg.ListenerProtocol(listener), "SASL_") {
		return listener, nil, tlsCfg, nil
	}
	for _, m := range n.cfg.SASLEnabledMechanisms(listener) {
		if slices.Contains(webConsoleMechanisms(), strings.ToUpper(m)) {
			mechs = append(mechs, strings.ToUpper(m))
		}
	}
	if len(mechs) == 0 {
		return "", nil, nil, fmt.Errorf("listener %s enables none of the mechanisms the console logs in with (%s)",
			listener, strings.Join(webConsoleMechanisms(), ", "))
	}
	return listener, mechs, tlsCfg, nil
}

// pinnedTLS trusts the certificate the listener serves at the time of
// each handshake (a reloaded keystore included) and nothing else.
func pinnedTLS(st *tlsconf.Store) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		// The chain and name are not checked: the one certificate
		// accepted is the node's own, compared byte for byte below.
		InsecureSkipVerify: true, //nolint:gosec // pinned in VerifyConnection
		VerifyConnection: func(cs tls.ConnectionState) error {
			own, err := st.ServerConfig().GetConfigForClient(nil)
			if err != nil {
				return err
			}
			if len(cs.PeerCertificates) == 0 || len(own.Certificates) == 0 || len(own.Certificates[0].Certificate) == 0 ||
				!bytes.Equal(cs.PeerCertificates[0].Raw, own.Certificates[0].Certificate[0]) {
				return errors.New("the listener did not present this node's own certificate")
			}
			return nil
		},
	}
}

// loopbackAddr is where this node's listener is reached from the node
// itself: its bound address, with a wildcard host replaced by loopback.
func (n *Node) loopbackAddr(listener string) (string, error) {
	a := n.Addr(listener)
	if a == nil {
		return "", errors.New("listener " + listener + " is not bound yet")
	}
	return loopbackOf(a), nil
}

// consoleDialAddr sends the console's dials of this node's advertised
// address for listener to its loopback address: in a container publishing
// another port (-p 19092:9092, advertised 127.0.0.1:19092) the advertised
// address is the host's and does not reach the node from inside, so every
// page that followed the metadata to it failed.
func (n *Node) consoleDialAddr(listener string) func(string) string {
	var self string
	for _, l := range n.cfg.AdvertisedListeners() {
		if l.Name == listener && l.Port != 0 {
			self = l.Addr()
		}
	}
	return func(addr string) string {
		if self == "" || addr != self {
			return addr
		}
		if lb, err := n.loopbackAddr(listener); err == nil {
			return lb
		}
		return addr
	}
}

// loopbackOf is a bound address with a wildcard host replaced by 127.0.0.1.
// A wildcard is 127.0.0.1 even when Go reports it as [::]: Go binds
// 0.0.0.0 as a dual-stack [::] socket, and ::1 does not exist where IPv6 is
// off (a Docker container's default), while 127.0.0.1 reaches either.
func loopbackOf(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	ip := tcp.IP
	if ip == nil || ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1)
	}
	return net.JoinHostPort(ip.String(), fmt.Sprint(tcp.Port))
}

// sluiceVersion is what `sluice version` prints.
func sluiceVersion() string {
	revision := "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				revision = s.Value
			}
		}
	}
	return fmt.Sprintf("sluice (revision %s), Kafka protocol of Apache Kafka %s", revision, api.PinnedRelease().Name)
}
