package quorum

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/testutil"
	"github.com/sluice-io/sluice/internal/vfs"
)

// listMachine is a state machine whose state is the list of applied data;
// its snapshot is that list in JSON.
type listMachine struct {
	appliedLog
	restores int
	pad      int
}

// listSnapshot is listMachine's snapshot; Pad makes it as large as a test
// needs (a snapshot sent in chunks).
type listSnapshot struct {
	List []string
	Pad  []byte
}

func (m *listMachine) take() ([]byte, error) {
	return json.Marshal(listSnapshot{List: m.data(), Pad: make([]byte, m.pad)})
}

func (m *listMachine) restore(offset int64, epoch int32, data []byte) error {
	var snap listSnapshot
	if err := json.Unmarshal(data, &snap); err != nil {
		return err
	}
	list := snap.List
	m.mu.Lock()
	defer m.mu.Unlock()
	m.restores++
	m.entries = nil
	for _, s := range list {
		m.entries = append(m.entries, Committed{Offset: offset, Epoch: epoch, Data: []byte(s)})
	}
	// Later entries must come after the snapshot's offset.
	if n := len(m.entries); n > 0 {
		m.entries[n-1].Offset = offset
	}
	return nil
}

func snapshotOptions(fsys vfs.FS, dir string, m *listMachine, maxBytes int64, trailing uint64) *SnapshotOptions {
	return &SnapshotOptions{
		Store: NewFileSnapshotStore(fsys, dir, nil), Take: m.take, Restore: m.restore,
		MaxBytesBetween: maxBytes, TrailingEntries: trailing, Clock: clock.Real{},
	}
}

func TestRestartFromSnapshotAndTail(t *testing.T) {
	fsys := vfs.NewMem()
	dir := "/meta/__cluster_metadata-0"
	mkdirDurable(t, fsys, dir)
	logger := slog.New(slog.DiscardHandler)
	start := func(m *listMachine) (*Driver, *LogEntryStore) {
		store, err := OpenLogEntryStore(fsys, dir, clock.Real{}, logger)
		if err != nil {
			t.Fatal(err)
		}
		d, err := New(Options{NodeID: 0, Voters: []int32{0}, TickInterval: 10 * time.Millisecond, FS: fsys, Dir: dir, Store: store,
			Apply: m.apply, Snapshots: snapshotOptions(fsys, dir, m, 100, 3)})
		if err != nil {
			t.Fatal(err)
		}
		d.Start()
		return d, store
	}
	first := &listMachine{}
	d, store := start(first)
	var want []string
	for i := range 50 {
		data := fmt.Sprintf("entry-%02d", i)
		if _, err := d.Propose(context.Background(), []byte(data)); err != nil {
			t.Fatal(err)
		}
		want = append(want, data)
	}
	st := d.Status()
	stop(t, d)
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	names, _ := fsys.List(dir)
	var checkpoints []string
	for _, n := range names {
		if strings.HasSuffix(n, CheckpointSuffix) {
			checkpoints = append(checkpoints, n)
		}
	}
	if len(checkpoints) != 1 || st.LogStartOffset == 0 {
		t.Fatalf("checkpoints %v, log start offset %d: want one snapshot and a compacted log", checkpoints, st.LogStartOffset)
	}
	// A crash keeps only what was synced: the snapshot and the log.
	fsys.Crash()

	second := &listMachine{}
	d, store = start(second)
	defer store.Close()
	defer stop(t, d)
	<-d.Replayed()
	if second.restores != 1 {
		t.Fatalf("restores %d, want 1", second.restores)
	}
	if got := second.data(); !slices.Equal(got, want) {
		t.Fatalf("after restart %v, want %v", got, want)
	}
	if _, err := d.Propose(context.Background(), []byte("after")); err != nil {
		t.Fatal(err)
	}
	if got := second.data(); got[len(got)-1] != "after" {
		t.Fatalf("after restart and propose: %v", got)
	}
}

func TestLaggingVoterCatchesUpFromSnapshot(t *testing.T) {
	c := newCluster(t, 3)
	// Restart every voter with snapshots on: a snapshot every ~10 entries,
	// two entries kept behind it.
	machines := map[int32]*listMachine{}
	for _, id := range c.ids {
		c.crash(id)
	}
	for _, id := range c.ids {
		m := &listMachine{}
		machines[id] = m
		d, err := New(Options{
			NodeID: id, Voters: c.ids, ElectionTimeout: 100 * time.Millisecond, TickInterval: 10 * time.Millisecond,
			FS: vfs.Default, Dir: c.dirs[id], Store: c.stores[id], Transport: c.net.Transport(RaftID(id)),
			Apply: m.apply, Snapshots: snapshotOptions(vfs.Default, c.dirs[id], m, 80, 2),
		})
		if err != nil {
			t.Fatal(err)
		}
		c.drivers[id] = d
		c.net.Register(RaftID(id), d)
		d.Start()
	}
	leader := c.leader(c.ids)
	var lagging int32
	for _, id := range c.ids {
		if id != leader {
			lagging = id
			break
		}
	}
	c.net.Isolate(RaftID(lagging), []uint64{RaftID(1), RaftID(2), RaftID(3)})
	var want []string
	for i := range 40 {
		data := fmt.Sprintf("entry-%02d", i)
		c.propose(leader, data)
		want = append(want, data)
	}
	if c.drivers[leader].Status().LogStartOffset < 10 {
		t.Fatalf("leader log start offset %d: not compacted", c.drivers[leader].Status().LogStartOffset)
	}
	c.net.Heal()
	testutil.Eventually(t, 10*time.Second, func() bool { return slices.Equal(machines[lagging].data(), want) }, "lagging voter to catch up")
	machines[lagging].mu.Lock()
	restores := machines[lagging].restores
	machines[lagging].mu.Unlock()
	if restores == 0 {
		t.Fatal("lagging voter caught up without a snapshot")
	}
}

func TestStepRefusesImpossibleMessages(t *testing.T) {
	fsys := vfs.NewMem()
	mkdirDurable(t, fsys, "/q")
	v, err := NewVoter(Options{NodeID: 1, Voters: []int32{1, 2, 3}, FS: fsys, Dir: "/q", Store: NewMemoryEntryStore(),
		Transport: NewMemNetwork().Transport(RaftID(1)), Apply: func(Committed) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	msg := func(typ raftpb.MessageType, from int32, term uint64) *raftpb.Message {
		return &raftpb.Message{Type: typ.Enum(), From: proto.Uint64(RaftID(from)), To: proto.Uint64(RaftID(1)), Term: proto.Uint64(term)}
	}
	gap := msg(raftpb.MsgApp, 2, 1)
	gap.Entries = []*raftpb.Entry{{Index: proto.Uint64(1), Term: proto.Uint64(1)}, {Index: proto.Uint64(3), Term: proto.Uint64(1)}}
	futureTerm := msg(raftpb.MsgApp, 2, 1)
	futureTerm.Entries = []*raftpb.Entry{{Index: proto.Uint64(1), Term: proto.Uint64(5)}}
	commitBeyond := msg(raftpb.MsgHeartbeat, 2, 1)
	commitBeyond.Commit = proto.Uint64(100)
	noSnap := msg(raftpb.MsgSnap, 2, 1)
	for name, m := range map[string]*raftpb.Message{
		"local hup":       msg(raftpb.MsgHup, 2, 1),
		"proposal":        msg(raftpb.MsgProp, 2, 1),
		"unknown sender":  msg(raftpb.MsgHeartbeat, 9, 1),
		"from self":       msg(raftpb.MsgHeartbeat, 1, 1),
		"no term":         msg(raftpb.MsgHeartbeat, 2, 0),
		"gap":             gap,
		"entry term":      futureTerm,
		"commit beyond":   commitBeyond,
		"empty snapshot":  noSnap,
		"storage message": msg(raftpb.MsgStorageAppend, 2, 1),
	} {
		if err := v.Step(m); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := v.Step(msg(raftpb.MsgHeartbeat, 2, 1)); err != nil {
		t.Fatalf("valid heartbeat: %v", err)
	}
	if err := v.Process(); err != nil {
		t.Fatal(err)
	}
}

// mkdirDurable makes dir and syncs every parent, so it survives a MemFS crash.
func mkdirDurable(t *testing.T, fsys *vfs.MemFS, dir string) {
	t.Helper()
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for d := dir; d != "/" && d != "."; d = filepath.Dir(d) {
		if err := fsys.SyncDir(filepath.Dir(d)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFileSnapshotStoreKeepsNewestAndRefusesCorrupt(t *testing.T) {
	fsys := vfs.NewMem()
	dir := "/m/__cluster_metadata-0"
	mkdirDurable(t, fsys, dir)
	st := NewFileSnapshotStore(fsys, dir, nil)
	if snap, err := st.Latest(); snap != nil || err != nil {
		t.Fatalf("empty store: %v %v", snap, err)
	}
	mk := func(index, term uint64, data string) *raftpb.Snapshot {
		return &raftpb.Snapshot{Data: []byte(data), Metadata: &raftpb.SnapshotMetadata{Index: proto.Uint64(index), Term: proto.Uint64(term), ConfState: &raftpb.ConfState{Voters: []uint64{1}}}}
	}
	for _, s := range []*raftpb.Snapshot{mk(5, 1, "a"), mk(12, 2, "b")} {
		if err := st.Save(s); err != nil {
			t.Fatal(err)
		}
	}
	names, _ := fsys.List(dir)
	if !slices.Equal(names, []string{"00000000000000000012-0000000002.checkpoint"}) {
		t.Fatalf("files %v", names)
	}
	got, err := st.Latest()
	if err != nil || string(got.GetData()) != "b" || got.GetMetadata().GetIndex() != 12 {
		t.Fatalf("latest %v %v", got, err)
	}
	b, _ := vfs.ReadFile(fsys, filepath.Join(dir, names[0]))
	b[len(b)/2] ^= 1
	if err := vfs.WriteFileAtomic(fsys, filepath.Join(dir, names[0]), b); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Latest(); !errors.Is(err, ErrCorruptCheckpoint) {
		t.Fatalf("corrupt checkpoint: %v", err)
	}
}

// A crash between saving a snapshot from the leader and resetting the log
// leaves a log that ends before the snapshot: the restart resets it.
func TestRestartAfterSnapshotSavedBeforeLogReset(t *testing.T) {
	fsys := vfs.NewMem()
	dir := "/m/__cluster_metadata-0"
	mkdirDurable(t, fsys, dir)
	store, err := OpenLogEntryStore(fsys, dir, clock.Real{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if err := store.Append([]*raftpb.Entry{entry(1, 1, "a"), entry(2, 1, "b")}); err != nil {
		t.Fatal(err)
	}
	snap := &raftpb.Snapshot{Data: []byte(`{"List":["x"]}`), Metadata: &raftpb.SnapshotMetadata{Index: proto.Uint64(10), Term: proto.Uint64(3), ConfState: &raftpb.ConfState{Voters: []uint64{RaftID(0)}}}}
	if err := NewFileSnapshotStore(fsys, dir, nil).Save(snap); err != nil {
		t.Fatal(err)
	}
	m := &listMachine{}
	v, err := NewVoter(Options{NodeID: 0, Voters: []int32{0}, FS: fsys, Dir: dir, Store: store, Apply: m.apply, Snapshots: snapshotOptions(fsys, dir, m, 1<<20, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Campaign(); err != nil {
		t.Fatal(err)
	}
	if err := v.Process(); err != nil {
		t.Fatal(err)
	}
	var offset int64 = -1
	v.Propose([]byte("y"), func(o int64, err error) {
		if err != nil {
			t.Error(err)
		}
		offset = o
	})
	if err := v.Process(); err != nil {
		t.Fatal(err)
	}
	if offset != 11 || !slices.Equal(m.data(), []string{"x", "y"}) {
		t.Fatalf("offset %d, state %v", offset, m.data())
	}
}
