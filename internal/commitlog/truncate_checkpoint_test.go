package commitlog

import (
	"testing"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/commitlog/checkpoint"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/vfs"
)

// TestTruncationWritesCheckpoint: under a Manager, a truncation that lowers
// the recovery point rewrites the recovery-point checkpoint before it
// returns, as Kafka's LogManager.truncateTo does; a checkpoint still
// holding the old value would let recovery trust segments appended and
// rolled after the truncation whose background flush had not run. A
// truncation above the recovery point leaves the checkpoint alone.
func TestTruncationWritesCheckpoint(t *testing.T) {
	fsys := newDurableMem(t)
	m := newTestManager(t, fsys, clock.NewManual(testStart), "/data/a")
	defer m.Close()
	l, err := m.GetOrCreate(testTP, kafka.UUID{3}, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	var bases []int64
	for range 20 {
		info, err := l.Append(makeBatch(batchSpec{records: 2, valueSize: 50, timestamp: testStart.UnixMilli()}), 0)
		if err != nil {
			t.Fatal(err)
		}
		bases = append(bases, info.FirstOffset)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := m.CheckpointRecoveryPoints(); err != nil {
		t.Fatal(err)
	}
	if got := readRecoveryCheckpoint(t, fsys); got != l.LogEndOffset() {
		t.Fatalf("checkpoint %d after a flush, want the log end %d", got, l.LogEndOffset())
	}
	flushed := l.LogEndOffset()
	if _, err := l.Append(makeBatch(batchSpec{records: 2, valueSize: 50, timestamp: testStart.UnixMilli()}), 0); err != nil {
		t.Fatal(err)
	}
	if err := l.TruncateTo(flushed); err != nil { // above the recovery point: nothing to rewrite
		t.Fatal(err)
	}
	if got := readRecoveryCheckpoint(t, fsys); got != flushed {
		t.Fatalf("checkpoint %d after a truncation at the recovery point %d", got, flushed)
	}
	if err := l.TruncateTo(bases[7]); err != nil {
		t.Fatal(err)
	}
	if got := readRecoveryCheckpoint(t, fsys); got != bases[7] {
		t.Fatalf("checkpoint %d after truncating to %d", got, bases[7])
	}
	if err := l.TruncateFullyAndStartAt(bases[2]); err != nil {
		t.Fatal(err)
	}
	if got := readRecoveryCheckpoint(t, fsys); got != bases[2] {
		t.Fatalf("checkpoint %d after a full truncation to %d", got, bases[2])
	}
}

func readRecoveryCheckpoint(t *testing.T, fsys vfs.FS) int64 {
	t.Helper()
	offs, err := checkpoint.Read(fsys, "/data/a/"+checkpoint.RecoveryPointFile)
	if err != nil {
		t.Fatal(err)
	}
	return offs[testTP]
}
