package node

import (
	"fmt"
	"strconv"

	"github.com/sluice-io/sluice/internal/config"
)

// startAutoBalancer runs the active controller's automatic balancer on a
// voter (internal/controller/quorumctl RunAutoBalancer): a plan on every
// settled broker arrival or departure, executed when
// sluice.balancer.auto.enable is true. It ends when the controller stops.
func (n *Node) startAutoBalancer() error {
	if n.ctrl == nil {
		return nil
	}
	execute := false
	if v, ok := n.cfg.Raw(config.SluiceBalancerAutoEnable); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%s=%s: expected true or false", config.SluiceBalancerAutoEnable.Name(), v)
		}
		execute = b
	}
	go n.ctrl.RunAutoBalancer(execute)
	return nil
}
