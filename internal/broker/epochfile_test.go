package broker

import (
	"path/filepath"
	"testing"

	"github.com/sluice-io/sluice/internal/vfs"
)

// TestBrokerEpochRecordedAndConsumed: a clean stop's epoch is read once at
// the next start and the file is gone afterwards, so a later unclean stop
// claims nothing; a damaged file counts as no clean stop.
func TestBrokerEpochRecordedAndConsumed(t *testing.T) {
	fsys := vfs.NewMem()
	dir := "/meta"
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := consumeBrokerEpoch(fsys, dir); err != nil || got != -1 {
		t.Fatalf("no file: got %d, %v; want -1", got, err)
	}
	if err := recordBrokerEpoch(fsys, dir, 4711); err != nil {
		t.Fatal(err)
	}
	if got, err := consumeBrokerEpoch(fsys, dir); err != nil || got != 4711 {
		t.Fatalf("after a clean stop: got %d, %v; want 4711", got, err)
	}
	if _, err := fsys.Stat(filepath.Join(dir, brokerEpochFile)); !vfs.IsNotExist(err) {
		t.Fatalf("the epoch file is still there after it was read: %v", err)
	}
	if got, _ := consumeBrokerEpoch(fsys, dir); got != -1 {
		t.Fatalf("second read: got %d, want -1", got)
	}
	for _, bad := range []string{"", "broker.epoch=", "broker.epoch=-3", "epoch=5", "broker.epoch=12x"} {
		if err := vfs.WriteFileAtomic(fsys, filepath.Join(dir, brokerEpochFile), []byte(bad)); err != nil {
			t.Fatal(err)
		}
		if got, err := consumeBrokerEpoch(fsys, dir); err != nil || got != -1 {
			t.Fatalf("file %q: got %d, %v; want -1", bad, got, err)
		}
	}
}
