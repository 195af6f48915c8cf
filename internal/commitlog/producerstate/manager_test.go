package producerstate

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/records"
)

func TestCheckDoesNotChangeStateAndUpdateRecords(t *testing.T) {
	m := New(Options{Name: "t-0"})
	h := dataBatch(1, 0, 0, 2, 0, 1000, false)
	if v, err := m.Check(h); err != nil || v.Duplicate {
		t.Fatalf("check: %+v %v", v, err)
	}
	if m.Len() != 0 || m.MapEndOffset() != 0 {
		t.Fatalf("Check changed state: %d producers, end %d", m.Len(), m.MapEndOffset())
	}
	if err := m.Update(h); err != nil {
		t.Fatal(err)
	}
	if err := m.Update(h); err == nil {
		t.Fatal("Update of a duplicate succeeded")
	}
	if err := m.Update(dataBatch(1, 0, 5, 1, 2, 1000, false)); !errors.Is(err, kerr.OutOfOrderSequenceNumber) {
		t.Fatalf("gap: %v", err)
	}
	if e, _ := m.Entry(1); e.LastSeq() != 1 || m.MapEndOffset() != 2 {
		t.Fatalf("state %v end %d", &e, m.MapEndOffset())
	}
	ctl := dataBatch(1, 0, -1, 1, 2, 1000, false)
	ctl.Attributes |= records.ControlBit
	if _, err := m.Check(ctl); err == nil {
		t.Fatal("client control batch accepted")
	}
}

func TestAbandonedAppendLeavesNoTrace(t *testing.T) {
	m := New(Options{Name: "t-0"})
	if err := m.Replay(dataBatch(1, 0, 0, 1, 0, 1000, false)); err != nil {
		t.Fatal(err)
	}
	a := m.BeginAppend(OriginClient)
	if _, err := a.AddBatch(dataBatch(1, 0, 1, 1, 1, 2000, true)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AddBatch(dataBatch(1, 0, 7, 1, 2, 2000, true)); !errors.Is(err, kerr.OutOfOrderSequenceNumber) {
		t.Fatalf("second batch: %v", err)
	}
	// Not committed: no new batch, no transaction, no end offset.
	e, _ := m.Entry(1)
	if _, ok := m.FirstUnstableOffset(); ok || e.LastSeq() != 0 || e.LastTimestamp != 1000 || m.MapEndOffset() != 1 {
		t.Fatalf("abandoned append changed the state: %v end %d", &e, m.MapEndOffset())
	}
}

func TestAppendOfManyProducersAndPlainBatches(t *testing.T) {
	m := New(Options{Name: "t-0"})
	a := m.BeginAppend(OriginClient)
	plain := records.Header{BaseOffset: 0, Magic: records.CurrentMagic, LastOffsetDelta: 4, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	for _, h := range []records.Header{plain, dataBatch(2, 1, 0, 1, 5, 1000, false), dataBatch(3, 0, 9, 2, 6, 1000, false), dataBatch(2, 1, 1, 1, 8, 1000, false)} {
		if v, err := a.AddBatch(h); err != nil || v.Duplicate {
			t.Fatalf("batch at %d: %+v %v", h.BaseOffset, v, err)
		}
	}
	if done := a.Commit(); len(done) != 0 {
		t.Fatalf("completed %v", done)
	}
	if ids := m.ProducerIDs(); !reflect.DeepEqual(ids, []int64{2, 3}) || m.MapEndOffset() != 9 {
		t.Fatalf("producers %v end %d", ids, m.MapEndOffset())
	}
	if e, _ := m.Entry(2); len(e.Batches()) != 2 {
		t.Fatalf("producer 2: %v", &e)
	}
}

func TestCoordinatorOriginChecksEpochNotSequence(t *testing.T) {
	m := New(Options{Name: "t-0"})
	if err := m.Replay(dataBatch(1, 3, 0, 1, 0, 1000, true)); err != nil {
		t.Fatal(err)
	}
	a := m.BeginAppend(OriginCoordinator)
	if _, err := a.AddBatch(dataBatch(1, 3, 50, 1, 1, 1000, true)); err != nil {
		t.Fatalf("coordinator write with any sequence: %v", err)
	}
	if _, err := m.BeginAppend(OriginCoordinator).AddBatch(dataBatch(1, 2, 1, 1, 1, 1000, true)); !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("stale epoch: %v", err)
	}
	ct, ok, err := m.ReplayMarker(markerHeader(1, 3, 1), Marker{Commit: false, CoordinatorEpoch: 0})
	if err != nil || !ok || !ct.IsAborted || ct.FirstOffset != 0 || ct.LastStableOffset != 2 {
		t.Fatalf("marker: %+v %t %v", ct, ok, err)
	}
	if err := m.Replay(markerHeader(1, 3, 2)); err == nil {
		t.Fatal("Replay took a control batch")
	}
}

func markerHeader(pid int64, epoch int16, offset int64) records.Header {
	h := dataBatch(pid, epoch, -1, 1, offset, 1000, true)
	h.Attributes |= records.ControlBit
	return h
}

func TestRemoveStrayAndMarkForDeletion(t *testing.T) {
	dir := t.TempDir()
	m := newTestManager(t, dir, time.UnixMilli(0))
	for _, off := range []int64{0, 5, 7, 10, 20, 30} {
		if err := os.WriteFile(filepath.Join(dir, SnapshotFileName(off)), EncodeSnapshot(nil), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Segments at 0, 10, 20: 5 and 7 are strays below the last segment; 30
	// is the clean-shutdown snapshot above it and stays.
	if err := m.RemoveStraySnapshots([]int64{0, 10, 20}); err != nil {
		t.Fatal(err)
	}
	if offs, _ := m.SnapshotOffsets(); !reflect.DeepEqual(offs, []int64{0, 10, 20, 30}) {
		t.Fatalf("after stray removal %v", offs)
	}
	path, ok, err := m.MarkSnapshotForDeletion(10)
	if err != nil || !ok || filepath.Base(path) != SnapshotFileName(10)+DeletedSuffix {
		t.Fatalf("mark: %q %t %v", path, ok, err)
	}
	if _, ok, err := m.MarkSnapshotForDeletion(11); ok || err != nil {
		t.Fatalf("mark missing: %t %v", ok, err)
	}
	if offs, _ := m.SnapshotOffsets(); !reflect.DeepEqual(offs, []int64{0, 20, 30}) {
		t.Fatalf("after marking %v", offs)
	}
	if err := m.RemoveStraySnapshots([]int64{0, 40}); err != nil {
		t.Fatal(err)
	}
	if offs, _ := m.SnapshotOffsets(); !reflect.DeepEqual(offs, []int64{0}) {
		t.Fatalf("strays below the last segment: %v", offs)
	}
}

func TestSequenceHelpers(t *testing.T) {
	const max = 1<<31 - 1
	cases := []struct {
		last, next int32
		want       bool
	}{{0, 1, true}, {4, 6, false}, {max, 0, true}, {max - 1, max, true}, {max, 1, false}, {-1, 0, true}}
	for _, c := range cases {
		if got := inSequence(c.last, c.next); got != c.want {
			t.Errorf("inSequence(%d, %d) = %t", c.last, c.next, got)
		}
	}
	if got := decrementSequence(1, 3); got != max-1 {
		t.Errorf("decrementSequence(1, 3) = %d", got)
	}
	if got := decrementSequence(10, 3); got != 7 {
		t.Errorf("decrementSequence(10, 3) = %d", got)
	}
}

func TestHasLateTransaction(t *testing.T) {
	m := New(Options{Name: "t-0"})
	if m.HasLateTransaction(1<<40, 0) {
		t.Fatal("late transaction without any transaction")
	}
	if err := m.Replay(dataBatch(1, 0, 0, 1, 0, 10_000, true)); err != nil {
		t.Fatal(err)
	}
	const timeout = 60_000
	limit := int64(10_000 + timeout + LateTransactionBufferMs)
	if m.HasLateTransaction(limit, timeout) {
		t.Fatal("late at exactly the limit")
	}
	if !m.HasLateTransaction(limit+1, timeout) {
		t.Fatal("not late past the limit")
	}
}
