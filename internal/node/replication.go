package node

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/internal/api"
	"sluice/internal/config"
	"sluice/internal/metadata"
	"sluice/internal/replication"
)

// replicationOptions builds the replica manager's follower and ISR
// settings from the replica.* keys. A single node has no other replica:
// it runs no fetchers and sends no ISR changes (it would only ever keep
// itself in the ISR).
func (n *Node) replicationOptions() replication.ReplicationOptions {
	if n.cfg.SingleNode() {
		return replication.ReplicationOptions{}
	}
	n.fetchTransport = replication.NewKafkaTransport(n.loader.Image, n.cfg.InterBrokerListenerName(), n.cfg.NodeID())
	return replication.ReplicationOptions{
		Transport:             n.fetchTransport,
		AlterPartition:        isrSender{n: n},
		BrokerEpoch:           n.brokerEpoch,
		NumReplicaFetchers:    int(n.cfg.Int(config.NumReplicaFetchers)),
		ReplicaLagTimeMax:     millis(n.cfg.Long(config.ReplicaLagTimeMaxMs)),
		FetchWaitMax:          millis(int64(n.cfg.Int(config.ReplicaFetchWaitMaxMs))),
		FetchMinBytes:         n.cfg.Int(config.ReplicaFetchMinBytes),
		FetchMaxBytes:         n.cfg.Int(config.ReplicaFetchMaxBytes),
		FetchResponseMaxBytes: n.cfg.Int(config.ReplicaFetchResponseMaxBytes),
		FetchBackoff:          millis(int64(n.cfg.Int(config.ReplicaFetchBackoffMs))),
	}
}

// brokerEpoch is this broker's registration epoch, -1 before it registers.
func (n *Node) brokerEpoch() int64 {
	n.broker.mu.Lock()
	defer n.broker.mu.Unlock()
	return n.broker.epoch
}

// AlterPartition implements api.ISRAlterer: the active controller checks a
// leader's ISR change and commits it.
func (n *Node) AlterPartition(ctx context.Context, req *kmsg.AlterPartitionRequest) (*kmsg.AlterPartitionResponse, error) {
	if !n.driver.Status().IsLeader {
		return nil, api.ErrNotController
	}
	var resp *kmsg.AlterPartitionResponse
	err := n.control.submit(ctx, func(im *metadata.Image) ([]metadata.Record, error) {
		var recs []metadata.Record
		recs, resp = n.ctrl.AlterPartition(im, req)
		return recs, nil
	})
	return resp, err
}

// isrSender delivers the replica manager's ISR changes to the active
// controller: this node's own when it is active, else over the CONTROLLER
// listener.
type isrSender struct{ n *Node }

func (s isrSender) AlterPartition(ctx context.Context, change replication.ISRChange) (int32, error) {
	req := change.AlterPartitionRequest(s.n.cfg.NodeID(), s.n.brokerEpoch())
	resp, err := forwardOr(ctx, s.n, req, func() (*kmsg.AlterPartitionResponse, error) { return s.n.AlterPartition(ctx, req) })
	if err != nil {
		return 0, fmt.Errorf("alter partition %s: %w", change.TP, err)
	}
	return replication.AlterPartitionOutcome(resp)
}
