package commitlog

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/sluice-io/sluice/internal/vfs"
)

// TestUncleanOpenSyncsOnlyACut: after kill -9 (the files whole, nothing
// synced since the recovery point) Open validates the tail and syncs
// nothing, leaving the recovery point where it was, so a restart of
// thousands of logs waits on no fsync; after a torn crash whose tail
// recovery cuts, Open syncs the cut at once (a second crash must not bring
// the cut bytes back once the recovery point moves past them).
func TestUncleanOpenSyncsOnlyACut(t *testing.T) {
	e := newRollEnv(t)
	e.appendUnsynced(20)
	leo := e.l.LogEndOffset()
	rp := e.l.RecoveryPoint()
	// kill -9: the process dies, the page cache keeps every write.
	e.l.Close()
	var syncs atomic.Int64
	e.efs.SetInjector(vfs.InjectorFunc(func(op vfs.Op, _ string, _ int) error {
		if op == vfs.OpSync || op == vfs.OpSyncDir {
			syncs.Add(1)
		}
		return nil
	}))
	e.open(StartState{RecoveryPoint: rp})
	if got := e.l.LogEndOffset(); got != leo {
		t.Fatalf("log end %d after an unclean open of a whole log, want %d", got, leo)
	}
	if n := syncs.Load(); n != 0 {
		t.Fatalf("unclean open of a whole log made %d fsyncs, want 0", n)
	}
	if got := e.l.RecoveryPoint(); got != rp {
		t.Fatalf("recovery point %d after an unclean open, want the checkpoint's %d", got, rp)
	}
	// Now a torn tail: the last batch cut in half on disk.
	e.l.Close()
	f, err := e.mem.OpenReadWrite(rollDir + "/00000000000000000000.log") // appendUnsynced does not roll
	if err != nil {
		t.Fatal(err)
	}
	st, err := e.mem.Stat(rollDir + "/00000000000000000000.log")
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(f.Truncate(st.Size()-50), f.Close()); err != nil {
		t.Fatal(err)
	}
	syncs.Store(0)
	e.open(StartState{RecoveryPoint: rp})
	defer e.l.Close()
	if got := e.l.LogEndOffset(); got >= leo {
		t.Fatalf("log end %d after a torn tail, want below %d", got, leo)
	}
	if syncs.Load() == 0 {
		t.Fatal("unclean open that cut a torn tail synced nothing")
	}
	if got := e.l.RecoveryPoint(); got != e.l.LogEndOffset() {
		t.Fatalf("recovery point %d after the cut was synced, want the log end %d", got, e.l.LogEndOffset())
	}
}
