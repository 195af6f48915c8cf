package node

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/internal/api"
	"sluice/internal/config"
	"sluice/internal/kafka"
	"sluice/internal/metadata"
	"sluice/internal/vfs"
)

// registerBroker registers this process as the broker of its node id and
// unfences it. A registration of an earlier process of this node that is
// still unfenced is fenced first: this node is the only voter and holds the
// log dir locks, so no other process can be that broker (Kafka waits for the
// old registration's session to time out instead).
func (n *Node) registerBroker(ctx context.Context) error {
	id := n.cfg.NodeID()
	err := n.control.submit(ctx, func(im *metadata.Image) ([]metadata.Record, error) {
		old, ok := im.Broker(id)
		if !ok || old.Fenced {
			return nil, nil
		}
		return []metadata.Record{&metadata.FenceBrokerRecord{BrokerID: id, BrokerEpoch: old.Epoch}}, nil
	})
	if err != nil {
		return fmt.Errorf("fence the previous registration of broker %d: %w", id, err)
	}
	req, err := n.registrationRequest()
	if err != nil {
		return err
	}
	var resp *kmsg.BrokerRegistrationResponse
	err = n.control.submit(ctx, func(im *metadata.Image) ([]metadata.Record, error) {
		var recs []metadata.Record
		recs, resp = n.ctrl.RegisterBroker(im, req)
		return recs, nil
	})
	if err != nil {
		return fmt.Errorf("register broker %d: %w", id, err)
	}
	if resp.ErrorCode != 0 {
		return fmt.Errorf("register broker %d: %w", id, kerr.ErrorForCode(resp.ErrorCode))
	}
	err = n.control.submit(ctx, func(im *metadata.Image) ([]metadata.Record, error) {
		return n.ctrl.UnfenceBroker(im, id, resp.BrokerEpoch)
	})
	if err != nil {
		return fmt.Errorf("unfence broker %d: %w", id, err)
	}
	return nil
}

// registrationRequest is this process's BrokerRegistration: a fresh
// incarnation id, the epoch a clean stop of the previous process recorded,
// the advertised broker listeners (an ephemeral port as bound) and
// broker.rack.
func (n *Node) registrationRequest() (*kmsg.BrokerRegistrationRequest, error) {
	incarnation, err := kafka.RandomUUID()
	if err != nil {
		return nil, fmt.Errorf("draw an incarnation id: %w", err)
	}
	previous, err := n.previousBrokerEpoch()
	if err != nil {
		return nil, err
	}
	req := kmsg.NewPtrBrokerRegistrationRequest()
	req.BrokerID, req.ClusterID, req.IncarnationID = n.cfg.NodeID(), n.clusterID, incarnation
	req.PreviousBrokerEpoch = previous
	if rack := n.cfg.String(config.BrokerRack); rack != "" {
		req.Rack = &rack
	}
	for _, l := range n.cfg.AdvertisedListeners() {
		if isControllerListener(n.cfg, l.Name) {
			continue
		}
		host, port := l.Host, l.Port
		if host == "" {
			host = hostName()
		}
		if port == 0 {
			// An ephemeral listener port is advertised as bound.
			if addr, ok := n.server.Addr(l.Name).(*net.TCPAddr); ok {
				port = addr.Port
			}
		}
		rl := kmsg.NewBrokerRegistrationRequestListener()
		rl.Name, rl.Host, rl.Port, rl.SecurityProtocol = l.Name, host, uint16(port), securityProtocolID(l.Protocol)
		req.Listeners = append(req.Listeners, rl)
	}
	return req, nil
}

// LogDirs implements api.ControlPlane.
func (n *Node) LogDirs() []api.LogDirDescription { return n.logs.describe() }

// KIP-966's fast re-registration: a broker that stops cleanly records its
// broker epoch; its next process sends it as PreviousBrokerEpoch, and the
// controller then takes the new registration at once instead of refusing it
// (DUPLICATE_BROKER_REGISTRATION) until the old session expires. That wait
// is what a whole-cluster restart spent on its last-stopped node, whose
// registration nobody was left to fence.

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

// previousBrokerEpoch returns the epoch the previous process recorded at a
// clean stop, or -1. The first call reads and removes the file.
func (n *Node) previousBrokerEpoch() (int64, error) {
	p := &n.prevEpoch
	p.once.Do(func() { p.epoch, p.err = consumeBrokerEpoch(n.fsys, metadataLogDir(n.cfg)) })
	return p.epoch, p.err
}

func consumeBrokerEpoch(fsys vfs.FS, dir string) (int64, error) {
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

// recordBrokerEpoch writes the epoch of a broker that stopped cleanly.
func recordBrokerEpoch(fsys vfs.FS, dir string, epoch int64) error {
	name := filepath.Join(dir, brokerEpochFile)
	if err := vfs.WriteFileAtomic(fsys, name, []byte("broker.epoch="+strconv.FormatInt(epoch, 10)+"\n")); err != nil {
		return fmt.Errorf("record the broker epoch in %s: %w", name, err)
	}
	return nil
}

// recordCleanStop records this broker's epoch when it registered with a
// multi-voter quorum (a single voter fences its own old registration
// itself and needs none).
func (n *Node) recordCleanStop() error {
	if n.transport == nil && n.observer == nil {
		return nil
	}
	n.broker.mu.Lock()
	registered, epoch := n.broker.registered, n.broker.epoch
	n.broker.mu.Unlock()
	if !registered {
		return nil
	}
	return recordBrokerEpoch(n.fsys, metadataLogDir(n.cfg), epoch)
}
