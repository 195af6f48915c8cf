package testcluster

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/internal/netfault"
)

// interBrokerListener is the listener replicas fetch from when a process
// cluster runs behind a proxy; clients keep the direct PLAINTEXT one.
const interBrokerListener = "INTERNAL"

// nodeProxies routes a process cluster's inter-node traffic through one
// Proxy: every voter is known to the others by a proxy address of its
// CONTROLLER listener, and every broker advertises a proxy address of an
// INTERNAL listener as its inter-broker listener. Clients keep reaching
// each broker directly on PLAINTEXT, so a cut node stays reachable by
// them, as a leader cut off its peers but not its producers would be.
type nodeProxies struct {
	proxy *Proxy
	// voters is controller.quorum.voters with proxy addresses.
	voters string
	// internal[i] and advertised[i] are node i's real and proxy INTERNAL
	// addresses ("" on a controller-only node).
	internal, advertised []string

	// owners attributes each proxied connection to a node's process.
	owners *netfault.Owners
}

func newNodeProxies(t testing.TB, l *Layout) *nodeProxies {
	t.Helper()
	np := &nodeProxies{internal: make([]string, len(l.Nodes)), advertised: make([]string, len(l.Nodes)),
		owners: netfault.NewOwners(len(l.Nodes))}
	np.proxy = netfault.NewProxy(np.owners.Identify, nil)
	t.Cleanup(np.proxy.Close)
	ports, err := freePorts(len(l.Nodes))
	if err != nil {
		t.Fatal(err)
	}
	var voters []string
	for i, n := range l.Nodes {
		if n.IsController() {
			addr, err := np.proxy.Listen(i, n.ControllerAddr)
			if err != nil {
				t.Fatal(err)
			}
			voters = append(voters, fmt.Sprintf("%d@%s", n.ID, addr))
		}
		if n.IsBroker() {
			np.internal[i] = fmt.Sprintf("127.0.0.1:%d", ports[i])
			if np.advertised[i], err = np.proxy.Listen(i, np.internal[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	np.voters = strings.Join(voters, ",")
	return np
}

// rewrite points node i's properties at the proxies. It replaces the keys
// it sets, overrides included.
func (np *nodeProxies) rewrite(i int, props map[string]string) {
	props["controller.quorum.voters"] = np.voters
	if np.internal[i] == "" {
		return
	}
	props["listeners"] += "," + interBrokerListener + "://" + np.internal[i]
	props["advertised.listeners"] += "," + interBrokerListener + "://" + np.advertised[i]
	props["listener.security.protocol.map"] += "," + interBrokerListener + ":PLAINTEXT"
	props["inter.broker.listener.name"] = interBrokerListener
}

// started records node i's process id (0 once it is gone).
func (np *nodeProxies) started(i, pid int) {
	np.owners.Set(i, pid)
}

// Cut cuts node i off the other nodes (see Proxy.Cut); clients still
// reach it. It needs Options.ProxyInterBroker.
func (p *Processes) Cut(i int, mode CutMode) {
	p.t.Helper()
	if p.proxies == nil {
		p.t.Fatal("testcluster: Cut needs Options.ProxyInterBroker")
	}
	p.proxies.proxy.Cut(i, mode)
}

// Heal ends node i's cut.
func (p *Processes) Heal(i int) {
	p.t.Helper()
	if p.proxies == nil {
		p.t.Fatal("testcluster: Heal needs Options.ProxyInterBroker")
	}
	p.proxies.proxy.Heal(i)
}

// CutLink cuts the traffic between nodes a and b only (see Proxy.CutLink).
func (p *Processes) CutLink(a, b int, mode CutMode) {
	p.t.Helper()
	if p.proxies == nil {
		p.t.Fatal("testcluster: CutLink needs Options.ProxyInterBroker")
	}
	p.proxies.proxy.CutLink(a, b, mode)
}

// HealLink ends the cut between nodes a and b.
func (p *Processes) HealLink(a, b int) {
	p.t.Helper()
	if p.proxies == nil {
		p.t.Fatal("testcluster: HealLink needs Options.ProxyInterBroker")
	}
	p.proxies.proxy.HealLink(a, b)
}
