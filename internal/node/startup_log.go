package node

import (
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/version"
)

// The start-up story at INFO is short: what starts (version, node, roles,
// pid), where its data is (and whether it was formatted now), the
// listeners bound, and the line saying it serves. Per-partition lines are
// DEBUG.

// logStarting is the first line of a start.
func (n *Node) logStarting(dirs []string) {
	n.logger.Info("starting node", "version", version.Version(), "node_id", n.cfg.NodeID(),
		"roles", strings.Join(n.cfg.ProcessRoles(), ","), "log_dirs", strings.Join(dirs, ","), "pid", os.Getpid())
}

// logFormatted names the log dirs this start formatted.
func (n *Node) logFormatted(formatted []string) {
	for _, dir := range formatted {
		n.logger.Info(fmt.Sprintf("formatted %s with cluster id %s", dir, n.clusterID), "node_id", n.cfg.NodeID())
	}
}

// logStarted says the node serves: its listeners are bound and, on a
// broker, it is registered.
func (n *Node) logStarted() {
	var bound []string
	for _, l := range n.cfg.Listeners() {
		if a := n.Addr(l.Name); a != nil {
			bound = append(bound, l.Name+"://"+a.String())
		}
	}
	n.logger.Info("node started", "node_id", n.cfg.NodeID(), "cluster_id", n.clusterID,
		"listeners", strings.Join(bound, ","), "version", version.Version(), "pid", os.Getpid())
}

// CheckListeners is the bind check New makes, for a caller that writes to
// the log dirs before New (sluice server --config-env formatting from
// $CLUSTER_ID) and must fail on a busy port first too.
func CheckListeners(cfg *config.Config) error { return checkListeners(cfg) }

// checkListeners binds each listener with a fixed port (Kafka's and the
// HTTP ones) and lets it go again, so a start whose port is taken fails
// before it creates or formats a log dir. They are bound for good later.
func checkListeners(cfg *config.Config) error {
	checked := map[string]bool{}
	check := func(name, addr string) error {
		_, port, err := net.SplitHostPort(addr)
		if err != nil || port == "0" || checked[addr] {
			return nil // a malformed address is refused where it is used
		}
		checked[addr] = true
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("listener %s: %w", name, err)
		}
		return ln.Close()
	}
	for _, l := range cfg.Listeners() {
		if err := check(l.Name, l.Addr()); err != nil {
			return err
		}
	}
	for _, key := range []config.SluiceKey{config.SluiceDebugListener, config.SluiceMetricsListener, config.SluiceConsoleListener} {
		if addr, ok := cfg.Raw(key); ok && strings.TrimSpace(addr) != "" {
			if err := check(key.Name(), strings.TrimSpace(addr)); err != nil {
				return err
			}
		}
	}
	return nil
}
