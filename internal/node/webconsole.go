package node

import (
	"errors"
	"fmt"
	"net"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"sluice/internal/api"
	"sluice/internal/config"
	"sluice/internal/console"
	"sluice/internal/console/web"
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
	listener, mechs, err := n.webConsoleBootstrap()
	if err != nil {
		return fmt.Errorf("%s=%s: %w", key, addr, err)
	}
	gatherer, _ := n.metrics.(prometheus.Gatherer)
	wc, err := web.New(web.Options{
		BootstrapFunc:  func() (string, error) { return n.loopbackAddr(listener) },
		SASLMechanisms: mechs,
		ReadOnly:       readOnly,
		Metrics:        gatherer,
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
// a SASL_PLAINTEXT one when there is one (the cluster authenticates, so
// the console logs its users in and acts as them), else a PLAINTEXT one.
// A node with TLS listeners only is refused: the console does not dial
// TLS yet.
func (n *Node) webConsoleBootstrap() (listener string, mechs []string, err error) {
	controllers := n.cfg.ControllerListenerNames()
	var plaintext, saslPlain string
	var others []string
	for _, l := range n.cfg.Listeners() {
		if slices.Contains(controllers, l.Name) {
			continue
		}
		switch l.Protocol {
		case "PLAINTEXT", "":
			plaintext = firstName(plaintext, l.Name)
		case "SASL_PLAINTEXT":
			saslPlain = firstName(saslPlain, l.Name)
		default:
			others = append(others, l.Name+" ("+l.Protocol+")")
		}
	}
	if saslPlain != "" {
		for _, m := range n.cfg.SASLEnabledMechanisms(saslPlain) {
			if slices.Contains(webConsoleMechanisms(), strings.ToUpper(m)) {
				mechs = append(mechs, strings.ToUpper(m))
			}
		}
		if len(mechs) == 0 {
			return "", nil, fmt.Errorf("listener %s enables none of the mechanisms the console logs in with (%s)",
				saslPlain, strings.Join(webConsoleMechanisms(), ", "))
		}
		return saslPlain, mechs, nil
	}
	if plaintext != "" {
		return plaintext, nil, nil
	}
	return "", nil, fmt.Errorf("the console connects to its node over a PLAINTEXT or SASL_PLAINTEXT listener; this node's are %s (TLS is not supported by the console yet)",
		strings.Join(others, ", "))
}

// firstName keeps the first listener name seen.
func firstName(have, name string) string {
	if have != "" {
		return have
	}
	return name
}

// loopbackAddr is where this node's listener is reached from the node
// itself: its bound address, with a wildcard host replaced by loopback.
func (n *Node) loopbackAddr(listener string) (string, error) {
	a := n.Addr(listener)
	if a == nil {
		return "", errors.New("listener " + listener + " is not bound yet")
	}
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String(), nil
	}
	ip := tcp.IP
	switch {
	case ip == nil || ip.IsUnspecified() && ip.To4() != nil:
		ip = net.IPv4(127, 0, 0, 1)
	case ip.IsUnspecified():
		ip = net.IPv6loopback
	}
	return net.JoinHostPort(ip.String(), fmt.Sprint(tcp.Port)), nil
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
