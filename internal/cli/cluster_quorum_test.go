package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"sluice/internal/testcluster"
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
}
