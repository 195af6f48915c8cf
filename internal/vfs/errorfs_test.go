package vfs

import (
	"errors"
	"io"
	"slices"
	"syscall"
	"testing"
)

func TestErrorFSWriteBudgetFailsWritesNotReads(t *testing.T) {
	budget := NewWriteBudget(10)
	e := NewErrorFS(NewMem(), budget)
	f, err := e.Create("/seg")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("123456"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("789012"), 6); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write past budget = %v, want ENOSPC", err)
	}
	if budget.Remaining() != 4 {
		t.Fatalf("remaining %d, want 4 (a failed write is not charged)", budget.Remaining())
	}
	buf := make([]byte, 16)
	if n, err := f.ReadAt(buf, 0); n != 6 || err != io.EOF || string(buf[:n]) != "123456" {
		t.Fatalf("read while full = %q, %v", buf[:n], err)
	}
	if err := f.Sync(); err != nil {
		t.Fatalf("sync while full = %v", err)
	}
	budget.Set(100)
	if _, err := f.WriteAt([]byte("789012"), 6); err != nil {
		t.Fatalf("write after space freed = %v", err)
	}
}

func TestErrorFSFailPathsTakesOneDirOffline(t *testing.T) {
	m := NewMem()
	for _, d := range []string{"/logs/a", "/logs/b"} {
		if err := m.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e := NewErrorFS(m, nil)
	fa, err := e.Create("/logs/a/seg")
	if err != nil {
		t.Fatal(err)
	}
	fb, err := e.Create("/logs/b/seg")
	if err != nil {
		t.Fatal(err)
	}

	e.SetInjector(FailPaths(UnderDir("/logs/a"), syscall.EIO))
	checks := map[string]error{}
	_, checks["write"] = fa.WriteAt([]byte("x"), 0)
	_, checks["read"] = fa.ReadAt(make([]byte, 1), 0)
	checks["sync"] = fa.Sync()
	checks["truncate"] = fa.Truncate(0)
	_, checks["size"] = fa.Size()
	_, checks["open"] = e.Open("/logs/a/seg")
	_, checks["create"] = e.Create("/logs/a/other")
	_, checks["list"] = e.List("/logs/a")
	_, checks["stat"] = e.Stat("/logs/a")
	checks["syncdir"] = e.SyncDir("/logs/a")
	checks["rename-in"] = e.Rename("/logs/b/seg", "/logs/a/moved")
	checks["remove"] = e.Remove("/logs/a/seg")
	for op, err := range checks {
		if !errors.Is(err, syscall.EIO) {
			t.Errorf("%s under the failed dir = %v, want EIO", op, err)
		}
	}
	if _, err := fb.WriteAt([]byte("ok"), 0); err != nil {
		t.Fatalf("write in the healthy dir = %v", err)
	}
	if names, err := e.List("/logs"); err != nil || !slices.Equal(names, []string{"a", "b"}) {
		t.Fatalf("List of the parent = %v, %v", names, err)
	}
	if _, err := e.Stat("/logs/ab"); !IsNotExist(err) {
		t.Fatalf("a sibling sharing the prefix must not match: %v", err)
	}

	e.SetInjector(nil)
	if _, err := fa.WriteAt([]byte("x"), 0); err != nil {
		t.Fatalf("write after clearing the injector = %v", err)
	}
	if err := fa.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestErrorFSCloseReleasesInnerFileOnInjectedError(t *testing.T) {
	m := NewMem()
	e := NewErrorFS(m, OnlyOps(FailPaths(func(string) bool { return true }, syscall.EIO), OpClose))
	f, err := e.Create("/f")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("x"), 0); err != nil {
		t.Fatalf("OnlyOps let a write fail: %v", err)
	}
	if err := f.Close(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Close = %v, want EIO", err)
	}
	inner := f.(*errorFile).inner
	if err := inner.Close(); err == nil {
		t.Fatal("inner file still open after a failed Close")
	}
}

// A failed directory sync leaves the rename of WriteFileAtomic undurable:
// after a crash the old contents are back, never a mix.
func TestWriteFileAtomicWithFailedSyncDirKeepsOldContentsAfterCrash(t *testing.T) {
	m := NewMem()
	if err := WriteFileAtomic(m, "/ckpt", []byte("old")); err != nil {
		t.Fatal(err)
	}
	e := NewErrorFS(m, OnlyOps(FailPaths(func(string) bool { return true }, syscall.EIO), OpSyncDir))
	if err := WriteFileAtomic(e, "/ckpt", []byte("new")); !errors.Is(err, syscall.EIO) {
		t.Fatalf("WriteFileAtomic = %v, want EIO", err)
	}
	m.Crash()
	if got := readAll(t, m, "/ckpt"); string(got) != "old" {
		t.Fatalf("after crash %q, want old", got)
	}
}

func TestAnyOfAndOpString(t *testing.T) {
	inj := AnyOf(NewWriteBudget(0), FailPaths(func(p string) bool { return p == "/x" }, syscall.EIO))
	if err := inj.MaybeError(OpWrite, "/y", 1); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("AnyOf write = %v", err)
	}
	if err := inj.MaybeError(OpStat, "/x", 0); !errors.Is(err, syscall.EIO) {
		t.Fatalf("AnyOf stat = %v", err)
	}
	if err := inj.MaybeError(OpStat, "/y", 0); err != nil {
		t.Fatalf("AnyOf healthy = %v", err)
	}
	for op := OpCreate; op <= OpClose; op++ {
		if op.String() == "op?" {
			t.Fatalf("op %d has no name", op)
		}
	}
}
