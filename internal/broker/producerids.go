package broker

import (
	"context"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/replication"
)

// ProducerIDManager hands out producer ids from blocks the active
// controller allocates through the metadata log (Kafka's
// RPCProducerIdManager), so a restart never reuses one.
type ProducerIDManager struct {
	nodeID     int32
	image      func() *metadata.Image
	controller *ControllerChannel

	// mu is held across a block allocation, so concurrent callers wait
	// for one block instead of each taking one.
	mu   sync.Mutex
	next int64
	end  int64 // exclusive; next == end means used up
}

// NewProducerIDManager returns a manager with no block yet.
func NewProducerIDManager(nodeID int32, image func() *metadata.Image, controller *ControllerChannel) *ProducerIDManager {
	return &ProducerIDManager{nodeID: nodeID, image: image, controller: controller}
}

// NextProducerID returns the next id, asking for a new block when the
// current one is used up.
func (m *ProducerIDManager) NextProducerID(ctx context.Context) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.next < m.end {
		id := m.next
		m.next++
		return id, nil
	}
	broker, ok := m.image().Broker(m.nodeID)
	if !ok {
		// Start-up: listeners open just before the broker registers.
		// Kafka answers a producer id request it cannot serve yet with
		// this retriable error.
		return 0, fmt.Errorf("allocate producer ids: broker %d is not registered yet: %w", m.nodeID, kerr.CoordinatorLoadInProgress)
	}
	req := kmsg.NewPtrAllocateProducerIDsRequest()
	req.BrokerID, req.BrokerEpoch = broker.ID, broker.Epoch
	resp, err := m.controller.AllocateProducerIDs(ctx, req)
	if err != nil {
		return 0, err
	}
	if resp.ErrorCode != 0 {
		return 0, fmt.Errorf("allocate producer ids: %w", kerr.ErrorForCode(resp.ErrorCode))
	}
	m.next, m.end = resp.ProducerIDStart+1, resp.ProducerIDStart+int64(resp.ProducerIDLen)
	return resp.ProducerIDStart, nil
}

// ISRSender delivers the replica manager's ISR changes to the active
// controller (replication.AlterPartitionSender).
type ISRSender struct {
	NodeID     int32
	Epoch      func() int64
	Controller *ControllerChannel
}

// AlterPartition implements replication.AlterPartitionSender.
func (s ISRSender) AlterPartition(ctx context.Context, change replication.ISRChange) (int32, error) {
	req := change.AlterPartitionRequest(s.NodeID, s.Epoch())
	resp, err := s.Controller.AlterPartition(ctx, req)
	if err != nil {
		return 0, fmt.Errorf("alter partition %s: %w", change.TP, err)
	}
	return replication.AlterPartitionOutcome(resp)
}

var _ replication.AlterPartitionSender = ISRSender{}
