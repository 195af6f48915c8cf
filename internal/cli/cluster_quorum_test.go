package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/testcluster"
)

func TestClusterQuorumAndBrokersSingleNode(t *testing.T) {
	addr := shared.broker(t)
	out := mustRun(t, "", "cluster", "quorum", "--brokers", addr)
	if !hasRowPrefix(out, "LEADER") || !hasRowPrefix(out, "EPOCH") || !hasRow(out, "NODE", "ROLE", "LOG", "END", "OFFSET", "LAG") {
		t.Fatalf("cluster quorum:\n%s", out)
	}
	out = mustRun(t, "", "cluster", "brokers", "--brokers", addr)
	if !hasRow(out, "BROKER", "HOST", "PORT", "RACK", "FENCED", "METADATA", "LAG") {
		t.Fatalf("cluster brokers:\n%s", out)
	}
}

func TestClusterQuorumThreeVoters(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Controllers: 3, Brokers: 1})
	addr := c.Layout.BrokerAddrs()[0]
	leader := fmt.Sprint(c.Layout.Nodes[c.ActiveController(10*time.Second)].ID)
	out := mustRun(t, "", "cluster", "quorum", "--brokers", addr)
	if !hasRow(out, "LEADER", leader) || !hasRowPrefix(out, "4") || !strings.Contains(out, "observer") {
		t.Fatalf("cluster quorum of 3 voters and a broker (leader %s):\n%s", leader, out)
	}
	out = mustRun(t, "", "cluster", "brokers", "--brokers", addr)
	if !hasRowPrefix(out, "4") || !strings.Contains(out, "false") {
		t.Fatalf("cluster brokers:\n%s", out)
	}
	// Through each controller directly (KIP-919): a controller that is not
	// the leader leads the command to the one that is; the dedicated
	// controllers' log end offsets are known (no "-" lag).
	asked := 0
	for _, n := range c.Layout.Nodes {
		if n.ControllerAddr == "" || n.Roles != "controller" {
			continue
		}
		asked++
		out := mustRun(t, "", "cluster", "quorum", "--bootstrap-controller", n.ControllerAddr)
		if !hasRow(out, "LEADER", leader) || !hasRowPrefix(out, "4") {
			t.Fatalf("cluster quorum --bootstrap-controller %s (leader %s):\n%s", n.ControllerAddr, leader, out)
		}
		voters := 0
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			if len(f) != 4 || (f[1] != "voter" && f[1] != "leader") {
				continue
			}
			voters++
			if f[3] == "-" {
				t.Fatalf("voter %s without a known lag through controller %s:\n%s", f[0], n.ControllerAddr, out)
			}
		}
		if voters != 3 {
			t.Fatalf("%d voters through controller %s:\n%s", voters, n.ControllerAddr, out)
		}
	}
	if asked != 3 {
		t.Fatalf("asked %d controllers, want 3", asked)
	}
}
