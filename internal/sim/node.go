package sim

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/controller"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/quorum"
	"github.com/sluice-io/sluice/internal/vfs"
)

// metaDir is every node's metadata log directory on its own MemFS.
const metaDir = "/data/__cluster_metadata-0"

// node is one controller: a Voter over a LogEntryStore and checkpoint
// files on the node's own MemFS (a crash keeps only what was synced), a
// Loader as its state machine and a Runner for controller operations.
type node struct {
	id     int32
	fs     *vfs.MemFS
	store  *quorum.LogEntryStore
	voter  *quorum.Voter
	loader *metadata.Loader
	runner *controller.Runner
	up     bool
}

// start opens the node's storage and builds its voter: the latest snapshot
// is restored and the log after it replays as the voter runs.
func (s *Sim) start(n *node) error {
	log := slog.New(slog.DiscardHandler)
	store, err := quorum.OpenLogEntryStore(n.fs, metaDir, s.clk, log)
	if err != nil {
		return fmt.Errorf("node %d: %w", n.id, err)
	}
	n.loader = metadata.NewLoader(log, func(_ *metadata.Delta, im *metadata.Image) { s.checkImage(n.id, im) })
	n.runner = controller.NewRunner(n.loader.Image, &stepProposer{sim: s, node: n})
	v, err := quorum.NewVoter(quorum.Options{
		NodeID: n.id, Voters: s.ids, TickInterval: tick, ElectionTimeout: s.cfg.ElectionTimeout, FetchTimeout: 2 * s.cfg.ElectionTimeout,
		FS: n.fs, Dir: metaDir, Store: store, Transport: s.net.transport(n.id),
		Apply: func(c quorum.Committed) error {
			s.checkCommitted(n.id, c)
			return n.loader.Apply(c.Offset, c.Epoch, c.Data)
		},
		Snapshots: &quorum.SnapshotOptions{
			Store:           quorum.NewFileSnapshotStore(n.fs, metaDir, log),
			Take:            func() ([]byte, error) { return n.loader.Snapshot(), nil },
			Restore:         n.loader.Restore,
			MaxBytesBetween: s.cfg.SnapshotBytes,
			TrailingEntries: 4,
			Clock:           s.clk,
		},
		Logger: log,
	})
	if err != nil {
		store.Close()
		return fmt.Errorf("node %d: %w", n.id, err)
	}
	n.store, n.voter, n.up = store, v, true
	return nil
}

// crash kills the node: pending proposals fail (their callers see an
// error, as a client of a dead controller does), unsynced bytes are lost.
func (s *Sim) crash(n *node) {
	n.voter.FailPending(quorum.ErrStopped)
	n.fs.Crash()
	n.store.Close() // its handles are dead after the crash; the error says so
	n.up, n.voter, n.store = false, nil, nil
}

func newNode(id int32) (*node, error) {
	fsys := vfs.NewMem()
	if err := fsys.MkdirAll(metaDir, 0o755); err != nil {
		return nil, err
	}
	for d := metaDir; d != "/"; d = filepath.Dir(d) {
		if err := fsys.SyncDir(filepath.Dir(d)); err != nil {
			return nil, err
		}
	}
	return &node{id: id, fs: fsys}, nil
}

// manualClock is the clock the sim advances; the nodes' logs and snapshot
// timers read it.
func newClock() *clock.Manual { return clock.NewManual(epochStart) }
