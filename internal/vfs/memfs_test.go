package vfs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"slices"
	"sync"
	"syscall"
	"testing"
)

func mustWrite(t *testing.T, fsys FS, name string, data []byte, sync bool) File {
	t.Helper()
	f, err := fsys.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func readAll(t *testing.T, fsys FS, name string) []byte {
	t.Helper()
	data, err := ReadFile(fsys, name)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return data
}

func mustSyncDir(t *testing.T, fsys FS, dir string) {
	t.Helper()
	if err := fsys.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
}

func TestMemFSFileOperations(t *testing.T) {
	m := NewMem()
	if err := m.MkdirAll("/d/sub", 0o755); err != nil {
		t.Fatal(err)
	}
	f := mustWrite(t, m, "/d/a", []byte("hello"), false)
	if _, err := f.WriteAt([]byte("XY"), 8); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, m, "d/a"); !bytes.Equal(got, []byte("hello\x00\x00\x00XY")) {
		t.Fatalf("contents %q", got)
	}
	buf := make([]byte, 4)
	if n, err := f.ReadAt(buf, 8); n != 2 || err != io.EOF {
		t.Fatalf("short ReadAt = %d, %v; want 2, EOF", n, err)
	}
	if err := f.Truncate(3); err != nil {
		t.Fatal(err)
	}
	if size, _ := f.Size(); size != 3 {
		t.Fatalf("size after truncate %d", size)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("second Close = %v", err)
	}
	if _, err := f.ReadAt(buf, 0); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("ReadAt after Close = %v", err)
	}

	ro, err := m.Open("/d/a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ro.WriteAt([]byte("x"), 0); !errors.Is(err, syscall.EBADF) {
		t.Fatalf("write on read-only handle = %v", err)
	}
	ro.Close()

	if names, _ := m.List("/d"); !slices.Equal(names, []string{"a", "sub"}) {
		t.Fatalf("List = %v", names)
	}
	if st, err := m.Stat("/d/sub"); err != nil || !st.IsDir() || st.Name() != "sub" {
		t.Fatalf("Stat dir = %v, %v", st, err)
	}
	if st, err := m.Stat("/d/a"); err != nil || st.IsDir() || st.Size() != 3 {
		t.Fatalf("Stat file = %v, %v", st, err)
	}
	if err := m.Rename("/d/a", "/d/sub/b"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Stat("/d/a"); !IsNotExist(err) {
		t.Fatalf("Stat renamed-away = %v", err)
	}
	if err := m.Remove("/d/sub"); !errors.Is(err, syscall.ENOTEMPTY) {
		t.Fatalf("Remove non-empty dir = %v", err)
	}
	if err := m.Rename("/d", "/d/sub/x"); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Rename into own subtree = %v", err)
	}
	if err := m.RemoveAll("/d"); err != nil {
		t.Fatal(err)
	}
	if err := m.RemoveAll("/d"); err != nil {
		t.Fatalf("RemoveAll of missing path = %v", err)
	}
	if _, err := m.Open("/d/sub/b"); !IsNotExist(err) {
		t.Fatalf("Open after RemoveAll = %v", err)
	}
	if _, err := m.Create("/missing/f"); !IsNotExist(err) {
		t.Fatalf("Create in missing dir = %v", err)
	}
	if _, err := m.Open("/"); !errors.Is(err, syscall.EISDIR) {
		t.Fatalf("Open dir = %v", err)
	}
}

func TestMemFSCrashDropsUnsyncedData(t *testing.T) {
	m := NewMem()
	f := mustWrite(t, m, "/seg", []byte("durable"), true)
	mustSyncDir(t, m, "/")
	if _, err := f.WriteAt([]byte("-lost"), 7); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("D"), 0); err != nil {
		t.Fatal(err)
	}
	m.Crash()
	if got := readAll(t, m, "/seg"); string(got) != "durable" {
		t.Fatalf("after crash %q, want %q", got, "durable")
	}
	if _, err := f.WriteAt([]byte("x"), 0); !errors.Is(err, ErrCrashed) {
		t.Fatalf("write on pre-crash handle = %v", err)
	}
	if err := f.Sync(); !errors.Is(err, ErrCrashed) {
		t.Fatalf("sync on pre-crash handle = %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("Close of pre-crash handle = %v", err)
	}
}

func TestMemFSCrashDropsUnsyncedTruncate(t *testing.T) {
	m := NewMem()
	f := mustWrite(t, m, "/seg", []byte("0123456789"), true)
	mustSyncDir(t, m, "/")
	if err := f.Truncate(4); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("ab"), 4); err != nil {
		t.Fatal(err)
	}
	m.Crash()
	if got := readAll(t, m, "/seg"); string(got) != "0123456789" {
		t.Fatalf("after crash %q", got)
	}
}

func TestMemFSCrashDropsUnsyncedDirectoryEntries(t *testing.T) {
	m := NewMem()
	if err := m.MkdirAll("/logs/t-0", 0o755); err != nil {
		t.Fatal(err)
	}
	mustSyncDir(t, m, "/")
	mustSyncDir(t, m, "/logs")
	mustWrite(t, m, "/logs/t-0/kept", []byte("k"), true).Close()
	mustWrite(t, m, "/logs/t-0/removed", []byte("r"), true).Close()
	mustWrite(t, m, "/logs/t-0/renamed", []byte("n"), true).Close()
	mustSyncDir(t, m, "/logs/t-0")

	// Synced contents but an unsynced entry: gone after the crash.
	mustWrite(t, m, "/logs/t-0/unsynced-entry", []byte("u"), true).Close()
	if err := m.Remove("/logs/t-0/removed"); err != nil {
		t.Fatal(err)
	}
	if err := m.Rename("/logs/t-0/renamed", "/logs/t-0/new-name"); err != nil {
		t.Fatal(err)
	}
	// A directory whose parent is never synced vanishes with its contents.
	if err := m.MkdirAll("/logs/t-1", 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, m, "/logs/t-1/f", []byte("f"), true).Close()
	mustSyncDir(t, m, "/logs/t-1")

	m.Crash()
	names, err := m.List("/logs/t-0")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"kept", "removed", "renamed"}; !slices.Equal(names, want) {
		t.Fatalf("after crash entries %v, want %v", names, want)
	}
	if got := readAll(t, m, "/logs/t-0/renamed"); string(got) != "n" {
		t.Fatalf("renamed file contents %q", got)
	}
	if names, _ := m.List("/logs"); !slices.Equal(names, []string{"t-0"}) {
		t.Fatalf("/logs after crash %v", names)
	}

	// Once synced, the same changes survive.
	if err := m.Rename("/logs/t-0/renamed", "/logs/t-0/new-name"); err != nil {
		t.Fatal(err)
	}
	mustSyncDir(t, m, "/logs/t-0")
	m.Crash()
	if names, _ := m.List("/logs/t-0"); !slices.Equal(names, []string{"kept", "new-name", "removed"}) {
		t.Fatalf("after synced rename and crash %v", names)
	}
}

func TestMemFSWriteFileAtomicSurvivesCrash(t *testing.T) {
	m := NewMem()
	if err := WriteFileAtomic(m, "/ckpt", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(m, "/ckpt", []byte("v2")); err != nil {
		t.Fatal(err)
	}
	m.Crash()
	if got := readAll(t, m, "/ckpt"); string(got) != "v2" {
		t.Fatalf("after crash %q, want v2", got)
	}
}

func TestMemFSCrashTornWritesKeepsPrefixOfUnsyncedTail(t *testing.T) {
	const synced = "SYNCED"
	tail := bytes.Repeat([]byte("0123456789"), 10)
	lengths := map[int]bool{}
	for seed := range uint64(50) {
		m := NewMem()
		f := mustWrite(t, m, "/seg", []byte(synced), true)
		mustSyncDir(t, m, "/")
		if _, err := f.WriteAt(tail, int64(len(synced))); err != nil {
			t.Fatal(err)
		}
		m.CrashTornWrites(rand.New(rand.NewPCG(seed, 1)))
		got := readAll(t, m, "/seg")
		want := append([]byte(synced), tail...)
		if len(got) < len(synced) || !bytes.Equal(got, want[:len(got)]) {
			t.Fatalf("seed %d: torn contents %q are not a prefix of %q at least %d long", seed, got, want, len(synced))
		}
		lengths[len(got)] = true
	}
	if len(lengths) < 10 {
		t.Fatalf("torn crashes kept only lengths %v; want varied prefixes", lengths)
	}
}

// TestMemFSCrashMatchesModel drives random writes, truncates and syncs and
// checks that a crash restores exactly the contents at the last Sync.
func TestMemFSCrashMatchesModel(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 2))
		m := NewMem()
		f, err := m.Create("/f")
		if err != nil {
			t.Fatal(err)
		}
		mustSyncDir(t, m, "/")
		var live, durable []byte
		for range 30 {
			switch rng.IntN(4) {
			case 0, 1:
				off := rng.IntN(64)
				p := make([]byte, rng.IntN(16))
				for i := range p {
					p[i] = byte('a' + rng.IntN(26))
				}
				if _, err := f.WriteAt(p, int64(off)); err != nil {
					t.Fatal(err)
				}
				if end := off + len(p); end > len(live) {
					live = append(live, make([]byte, end-len(live))...)
				}
				copy(live[off:], p)
			case 2:
				size := rng.IntN(64)
				if err := f.Truncate(int64(size)); err != nil {
					t.Fatal(err)
				}
				if size < len(live) {
					live = live[:size]
				} else {
					live = append(live, make([]byte, size-len(live))...)
				}
			case 3:
				if err := f.Sync(); err != nil {
					t.Fatal(err)
				}
				durable = slices.Clone(live)
			}
			if got := readAll(t, m, "/f"); !bytes.Equal(got, live) {
				t.Fatalf("seed %d: live contents %q, want %q", seed, got, live)
			}
		}
		m.Crash()
		if got := readAll(t, m, "/f"); !bytes.Equal(got, durable) {
			t.Fatalf("seed %d: after crash %q, want %q", seed, got, durable)
		}
	}
}

func TestMemFSConcurrentUse(t *testing.T) {
	m := NewMem()
	if err := m.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			name := fmt.Sprintf("/d/f%d", g)
			f, err := m.Create(name)
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			for i := range 200 {
				if _, err := f.WriteAt([]byte{byte(i)}, int64(i)); err != nil {
					t.Error(err)
					return
				}
				if i%50 == 0 {
					if err := f.Sync(); err != nil {
						t.Error(err)
					}
					if err := m.SyncDir("/d"); err != nil {
						t.Error(err)
					}
				}
				if _, err := m.List("/d"); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for g := range 4 {
		if got := readAll(t, m, fmt.Sprintf("/d/f%d", g)); len(got) != 200 || got[199] != 199 {
			t.Fatalf("file %d has %d bytes", g, len(got))
		}
	}
}
