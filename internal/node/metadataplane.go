package node

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/quorum"
)

// metadataPlane is how the node follows the metadata log: a voter runs a
// raft driver over its own copy of the log (with, among several voters, the
// raft transport and the log server observers fetch from); a dedicated
// broker runs an observer. Either applies committed entries to the loader,
// whose images the broker's publisher hands on.
type metadataPlane struct {
	loader *metadata.Loader
	// view is the driver or the observer.
	view     quorum.View
	driver   *quorum.Driver
	observer *quorum.Observer
	store    *quorum.LogEntryStore     // a voter's metadata log
	raft     *quorum.TCPTransport      // several voters only
	logs     *quorum.LogServer         // several voters only
	snaps    *quorum.FileSnapshotStore // a voter's checkpoints
	dyn      *dynamicQuorum            // a dynamic quorum's controller
}

// newMetadataPlane opens a voter's metadata log and builds its driver (and,
// with other voters, its transport and log server), or a dedicated
// broker's observer.
func (n *Node) newMetadataPlane(metaDir string) (*metadataPlane, error) {
	m := &metadataPlane{}
	var subscribers []metadata.Subscriber
	if n.broker != nil {
		subscribers = append(subscribers, n.broker.publisher.Enqueue)
	}
	m.loader = metadata.NewLoader(n.logger.With("component", "metadata"), subscribers...)
	if !n.cfg.HasRole("controller") {
		oopts := quorum.ObserverOptions{
			NodeID:       n.cfg.NodeID(),
			Voters:       voterAddrs(n.cfg),
			Peers:        n.peers,
			Apply:        m.apply,
			Restore:      m.loader.Restore,
			FetchTimeout: millis(int64(n.cfg.Int(config.ControllerQuorumFetchTimeoutMs))),
			Clock:        n.clk,
			Logger:       n.logger,
		}
		m.dyn = n.observeDynamicQuorum(&oopts)
		m.observer = quorum.NewObserver(oopts)
		m.view = m.observer
		return m, nil
	}
	if err := n.openVoter(m, filepath.Join(metaDir, quorum.MetadataPartition().String())); err != nil {
		m.stopQuorum()
		return nil, err
	}
	m.view = m.driver
	return m, nil
}

// apply hands one committed entry to the loader.
func (m *metadataPlane) apply(c quorum.Committed) error {
	return m.loader.Apply(c.Offset, c.Epoch, c.Data)
}

// openVoter opens the metadata log in dir and builds the raft driver.
func (n *Node) openVoter(m *metadataPlane, dir string) error {
	var err error
	if m.store, err = quorum.OpenLogEntryStore(n.fsys, dir, n.clk, n.logger.With("component", "metadata-log")); err != nil {
		return err // "quorum: open metadata log DIR: ..."
	}
	if m.dyn, err = n.openDynamicQuorum(dir); err != nil {
		return err
	}
	if !n.cfg.SingleNode() {
		topts := quorum.TCPOptions{
			ClusterID: n.clusterID,
			NodeID:    n.cfg.NodeID(),
			Voters:    voterAddrs(n.cfg),
			OnRefused: n.refusal.report,
			Dial:      n.raftDial(n.cfg.ControllerListenerNames()[0]),
			Logger:    n.logger,
		}
		if m.dyn != nil {
			m.dyn.transportOptions(&topts)
		}
		m.raft, err = quorum.NewTCPTransport(topts)
		if err != nil {
			return fmt.Errorf("raft transport: %w", err)
		}
	}
	var voters []int32
	for _, v := range n.cfg.Voters() {
		voters = append(voters, v.ID)
	}
	m.snaps = quorum.NewFileSnapshotStore(n.fsys, dir, n.logger.With("component", "metadata-snapshots"))
	opts := quorum.Options{
		NodeID:          n.cfg.NodeID(),
		Voters:          voters,
		ElectionTimeout: millis(int64(n.cfg.Int(config.ControllerQuorumElectionTimeoutMs))),
		FetchTimeout:    millis(int64(n.cfg.Int(config.ControllerQuorumFetchTimeoutMs))),
		TickInterval:    n.raftTick, // zero: the quorum's default
		FS:              n.fsys,
		Dir:             dir,
		Store:           m.store,
		Apply:           m.apply,
		Snapshots:       n.snapshotOptions(m),
		Logger:          n.logger,
		Clock:           n.clk,
	}
	if m.raft != nil {
		opts.Transport = m.raft
	}
	if m.dyn != nil {
		m.dyn.voterOptions(&opts, m.raft)
	}
	if m.driver, err = quorum.New(opts); err != nil {
		return fmt.Errorf("metadata quorum: %w", err)
	}
	if m.dyn != nil {
		n.watchOwnEndpoints(m.dyn, m.driver)
	}
	if m.raft != nil {
		m.logs = quorum.NewLogServer(m.driver, m.store, m.snaps, n.clusterID, n.logger.With("component", "metadata-log-server"))
	}
	return nil
}

// Entries kept in the log behind a snapshot. Kafka keeps the log behind its
// newest snapshot until metadata.max.retention.bytes / .ms are exceeded;
// the quorum compacts by entry count, so Sluice keeps about what one
// snapshot interval appends (at an assumed 1 KiB an entry), at least
// minTrailingEntries so a voter or observer a moment behind still reads
// entries, and at most maxTrailingEntries (etcd's catch-up count).
const (
	minTrailingEntries = 16
	maxTrailingEntries = 5000
)

// noTimeBasedSnapshots stands for metadata.log.max.snapshot.interval.ms=0,
// which turns time-based snapshots off in Kafka: the quorum takes a zero
// interval as its default, so the node passes a span no node lives through.
const noTimeBasedSnapshots = 100 * 365 * 24 * time.Hour

// snapshotOptions turn metadata snapshots on for a voter: after
// metadata.log.max.record.bytes.between.snapshots of new entries or
// metadata.log.max.snapshot.interval.ms the image is written as a
// checkpoint and the log compacted behind it; a restart loads the newest.
func (n *Node) snapshotOptions(m *metadataPlane) *quorum.SnapshotOptions {
	between := n.cfg.Long(config.MetadataLogMaxRecordBytesBetweenSnapshots)
	interval := millis(n.cfg.Long(config.MetadataLogMaxSnapshotIntervalMs))
	if interval <= 0 {
		interval = noTimeBasedSnapshots
	}
	return &quorum.SnapshotOptions{
		Store:           m.snaps,
		Take:            func() ([]byte, error) { return m.loader.Snapshot(), nil },
		Restore:         m.loader.Restore,
		MaxBytesBetween: between,
		MaxInterval:     interval,
		TrailingEntries: uint64(min(max(between/1024, minTrailingEntries), maxTrailingEntries)),
		Clock:           n.clk,
	}
}

// stopObserver stops a dedicated broker's observer.
func (m *metadataPlane) stopObserver() {
	if m.observer != nil {
		m.observer.Stop()
	}
}

// stopQuorum stops a voter's driver, then its transport, and closes its
// metadata log.
func (m *metadataPlane) stopQuorum() error {
	var errs []error
	if m.driver != nil {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		if err := m.driver.Stop(ctx); err != nil {
			errs = append(errs, err)
		}
		cancel()
	}
	if m.raft != nil {
		m.raft.Stop()
	}
	if m.store != nil {
		if err := m.store.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close metadata log: %w", err))
		}
	}
	return errors.Join(errs...)
}
