package logdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLockErrorNamesThePathOnce: a .lock that cannot be opened is refused
// with the path once (it read "open X/.lock: open X/.lock: ...").
func TestLockErrorNamesThePathOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, lockFileName)
	if err := os.Mkdir(path, 0o755); err != nil { // a directory cannot be opened for writing
		t.Fatal(err)
	}
	_, err := Lock([]string{dir})
	if err == nil {
		t.Fatal("a .lock directory was locked")
	}
	if n := strings.Count(err.Error(), path); n != 1 {
		t.Fatalf("error %q names %s %d times, want once", err, path, n)
	}
}

// TestLockRefusesSecondHolder: a dir locked by one holder is refused to
// the next, naming the dir, until released.
func TestLockRefusesSecondHolder(t *testing.T) {
	dir := t.TempDir()
	l, err := Lock([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Lock([]string{dir}); err == nil || !strings.Contains(err.Error(), "in use by another process") {
		t.Fatalf("second lock: %v, want in use", err)
	}
	l.Release()
	l, err = Lock([]string{dir})
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	l.Release()
}
