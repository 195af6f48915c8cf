package broker

// KIP-966's fast re-registration: a broker that stops cleanly records its
// broker epoch; its next process sends it as PreviousBrokerEpoch, and the
// controller then takes the new registration at once instead of refusing it
// (DUPLICATE_BROKER_REGISTRATION) until the old session expires. That wait
// is what a whole-cluster restart spent on its last-stopped node, whose
// registration nobody was left to fence.

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/vfs"
)

// brokerEpochFile, in the metadata log dir, holds the broker epoch of the
// last clean stop. Kafka keeps it in its clean-shutdown file; ours is apart
// because that file belongs to the log manager.
const brokerEpochFile = "previous-broker-epoch"

// previousEpoch is the epoch read from brokerEpochFile at start-up, taken
// once: the file is removed as it is read, so a process that then dies
// uncleanly leaves nothing that would claim a clean stop.
type previousEpoch struct {
	once  sync.Once
	epoch int64
	err   error
}

// registrationRequest is this process's BrokerRegistration: a fresh
// incarnation id, the epoch a clean stop of the previous process recorded,
// the advertised broker listeners and broker.rack.
func (m *LifecycleManager) registrationRequest() (*kmsg.BrokerRegistrationRequest, error) {
	incarnation, err := kafka.RandomUUID()
	if err != nil {
		return nil, fmt.Errorf("draw an incarnation id: %w", err)
	}
	previous, err := m.previousBrokerEpoch()
	if err != nil {
		return nil, err
	}
	req := kmsg.NewPtrBrokerRegistrationRequest()
	req.BrokerID, req.ClusterID, req.IncarnationID = m.opts.NodeID, m.opts.ClusterID, incarnation
	req.PreviousBrokerEpoch = previous
	if m.opts.Rack != "" {
		rack := m.opts.Rack
		req.Rack = &rack
	}
	req.Listeners = m.opts.Listeners()
	return req, nil
}

// previousBrokerEpoch returns the epoch the previous process recorded at a
// clean stop, or -1. The first call reads and removes the file.
func (m *LifecycleManager) previousBrokerEpoch() (int64, error) {
	p := &m.prev
	p.once.Do(func() { p.epoch, p.err = consumeBrokerEpoch(m.opts.FS, m.opts.Dir) })
	return p.epoch, p.err
}

func consumeBrokerEpoch(fsys vfs.FS, dir string) (int64, error) {
	if fsys == nil {
		return -1, nil
	}
	name := filepath.Join(dir, brokerEpochFile)
	data, err := vfs.ReadFile(fsys, name)
	if vfs.IsNotExist(err) {
		return -1, nil
	}
	if err != nil {
		return -1, fmt.Errorf("read %s: %w", name, err)
	}
	if err := fsys.Remove(name); err != nil {
		return -1, fmt.Errorf("remove %s: %w", name, err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return -1, fmt.Errorf("sync %s: %w", dir, err)
	}
	epoch, ok := parseBrokerEpoch(data)
	if !ok {
		// Not worth failing the start over: the broker then waits for
		// its old session to expire, as after an unclean stop.
		return -1, nil
	}
	return epoch, nil
}

// parseBrokerEpoch reads "broker.epoch=N"; anything else is not an epoch.
func parseBrokerEpoch(data []byte) (int64, bool) {
	v, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "broker.epoch=")
	if !ok {
		return -1, false
	}
	epoch, err := strconv.ParseInt(v, 10, 64)
	if err != nil || epoch < 0 {
		return -1, false
	}
	return epoch, true
}

// RecordCleanStop records the epoch of a broker registered with a quorum
// of several voters, once everything stopped cleanly (a single node fences
// its own old registration itself and needs none).
func (m *LifecycleManager) RecordCleanStop() error {
	if m.opts.Sole != nil || m.opts.FS == nil {
		return nil
	}
	m.mu.Lock()
	registered, epoch := m.registered, m.epoch
	m.mu.Unlock()
	if !registered {
		return nil
	}
	return recordBrokerEpoch(m.opts.FS, m.opts.Dir, epoch)
}

// recordBrokerEpoch writes the epoch of a broker that stopped cleanly.
func recordBrokerEpoch(fsys vfs.FS, dir string, epoch int64) error {
	name := filepath.Join(dir, brokerEpochFile)
	if err := vfs.WriteFileAtomic(fsys, name, []byte("broker.epoch="+strconv.FormatInt(epoch, 10)+"\n")); err != nil {
		return fmt.Errorf("record the broker epoch in %s: %w", name, err)
	}
	return nil
}
