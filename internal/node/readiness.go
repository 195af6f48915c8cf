package node

import (
	"fmt"

	"github.com/sluice-io/sluice/internal/metadata"
)

// readiness is /readyz: one line per unmet condition, none when ready. A
// controller is ready once the metadata quorum has a leader; a broker once
// it is registered, its published metadata holds its registration (Kafka's
// "caught up": the controller's isCaughtUp compares the broker's metadata
// offset with its registration record's) and it is not fenced.
func (n *Node) readiness() []string {
	var unmet []string
	if n.cfg.HasRole("controller") && n.meta.view.Status().Leader < 0 {
		unmet = append(unmet, "controller: the metadata quorum has no leader")
	}
	if n.broker != nil {
		lc := n.broker.lifecycle
		unmet = append(unmet, brokerReadiness(n.cfg.NodeID(), lc.Registered(), lc.Epoch(), n.broker.publisher.Image())...)
	}
	if len(unmet) == 0 {
		select {
		case <-n.ready:
		default:
			unmet = append(unmet, "node: starting")
		}
	}
	return unmet
}

// brokerReadiness checks a broker against its own published image.
func brokerReadiness(id int32, registered bool, epoch int64, im *metadata.Image) []string {
	if !registered {
		return []string{"broker: not registered with the controller"}
	}
	if im == nil {
		return []string{"broker: metadata not caught up: nothing published yet"}
	}
	b, ok := im.Broker(id)
	if !ok || b.Epoch != epoch {
		return []string{fmt.Sprintf("broker: metadata not caught up: the published metadata (offset %d) does not hold this broker's registration (epoch %d)", im.Offset(), epoch)}
	}
	if b.Fenced {
		return []string{fmt.Sprintf("broker: fenced by the controller (epoch %d)", epoch)}
	}
	return nil
}
