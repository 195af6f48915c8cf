package producerstate

import (
	"bytes"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/vfs"
)

// kafkaFixture is a snapshot laid out by hand from Kafka's
// PID_SNAPSHOT_MAP_SCHEMA (ProducerStateManager.java), one field per line.
const kafkaFixture = "" +
	"0001" + // version
	"%CRC%" + // crc, CRC-32C of everything below
	"00000003" + // producer_entries count
	// producer 1000: epoch 5, last batch seq ..42 ending at offset 1234, delta 3
	"00000000000003e8" + "0005" + "0000002a" + "00000000000004d2" + "00000003" +
	"0000018bcfe56800" + "ffffffff" + "ffffffffffffffff" +
	// producer 2000: epoch 0, seq 9 at offset 120, delta 0, coordinator 7, txn open at 99
	"00000000000007d0" + "0000" + "00000009" + "0000000000000078" + "00000000" +
	"0000018bcfe569f4" + "00000007" + "0000000000000063" +
	// producer 3000: only a marker seen, so no batch (seq -1, offset -1, delta 0)
	"0000000000000bb8" + "0002" + "ffffffff" + "ffffffffffffffff" + "00000000" +
	"0000018bcfe56be8" + "00000002" + "ffffffffffffffff"

func fixtureBytes(t *testing.T) []byte {
	t.Helper()
	parts := strings.SplitN(kafkaFixture, "%CRC%", 2)
	head, err := hex.DecodeString(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	body, err := hex.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	crc := crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli))
	out := append(head, byte(crc>>24), byte(crc>>16), byte(crc>>8), byte(crc))
	return append(out, body...)
}

func fixtureEntries() []*Entry {
	return []*Entry{
		{ProducerID: 1000, ProducerEpoch: 5, CoordinatorEpoch: -1, LastTimestamp: 1700000000000, CurrentTxnFirstOffset: -1,
			batches: []BatchMetadata{{LastSeq: 42, LastOffset: 1234, OffsetDelta: 3, Timestamp: 1700000000000}}},
		{ProducerID: 2000, ProducerEpoch: 0, CoordinatorEpoch: 7, LastTimestamp: 1700000000500, CurrentTxnFirstOffset: 99,
			batches: []BatchMetadata{{LastSeq: 9, LastOffset: 120, OffsetDelta: 0, Timestamp: 1700000000500}}},
		{ProducerID: 3000, ProducerEpoch: 2, CoordinatorEpoch: 2, LastTimestamp: 1700000001000, CurrentTxnFirstOffset: -1},
	}
}

func TestSnapshotMatchesKafkaLayout(t *testing.T) {
	want := fixtureBytes(t)
	if len(want) != 10+3*46 {
		t.Fatalf("fixture is %d bytes", len(want))
	}
	// The CRC-32C of the fixture, computed by an independent bitwise implementation.
	if crc := want[2:6]; !bytes.Equal(crc, []byte{0xe6, 0x4d, 0xc3, 0xa0}) {
		t.Fatalf("fixture crc %x", crc)
	}
	// Entries given out of order must still be written sorted.
	es := fixtureEntries()
	got := EncodeSnapshot([]*Entry{es[2], es[0], es[1]})
	if !bytes.Equal(got, want) {
		t.Fatalf("encoded\n%x\nwant\n%x", got, want)
	}
	decoded, err := DecodeSnapshot(want)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(decoded, es) {
		t.Fatalf("decoded %v, want %v", decoded, es)
	}
}

func TestDecodeSnapshotRejectsDefects(t *testing.T) {
	good := fixtureBytes(t)
	flip := func(i int) []byte { b := bytes.Clone(good); b[i] ^= 0x40; return b }
	badVersion := bytes.Clone(good)
	badVersion[1] = 2
	cases := map[string][]byte{
		"empty":         nil,
		"short header":  good[:9],
		"version 2":     badVersion,
		"crc flipped":   flip(3),
		"entry flipped": flip(30),
		"truncated":     good[:len(good)-1],
		"trailing byte": append(bytes.Clone(good), 0),
	}
	for name, b := range cases {
		if _, err := DecodeSnapshot(b); !errors.Is(err, ErrCorruptSnapshot) {
			t.Errorf("%s: err %v, want ErrCorruptSnapshot", name, err)
		}
	}
	// A count that disagrees with the length, with a valid CRC.
	forged := EncodeSnapshot(fixtureEntries())
	forged[9] = 4
	recrc(forged)
	if _, err := DecodeSnapshot(forged); !errors.Is(err, ErrCorruptSnapshot) {
		t.Errorf("forged count: err %v", err)
	}
	negative := EncodeSnapshot(nil)
	copy(negative[6:], []byte{0xff, 0xff, 0xff, 0xff})
	recrc(negative)
	if _, err := DecodeSnapshot(negative); !errors.Is(err, ErrCorruptSnapshot) {
		t.Errorf("negative count: err %v", err)
	}
}

func recrc(b []byte) {
	crc := crc32.Checksum(b[6:], crc32.MakeTable(crc32.Castagnoli))
	b[2], b[3], b[4], b[5] = byte(crc>>24), byte(crc>>16), byte(crc>>8), byte(crc)
}

func newTestManager(t *testing.T, dir string, now time.Time) *Manager {
	t.Helper()
	return New(Options{Dir: dir, Name: "t-0", FS: vfs.Default, Clock: clock.NewManual(now)})
}

func dataBatch(pid int64, epoch int16, seq int32, count int32, offset int64, ts int64, txn bool) records.Header {
	h := records.Header{BaseOffset: offset, Magic: records.CurrentMagic, LastOffsetDelta: count - 1, ProducerID: pid,
		ProducerEpoch: epoch, BaseSequence: seq, MaxTimestamp: ts, RecordCount: count}
	if txn {
		h.Attributes |= records.TransactionalBit
	}
	return h
}

func mustReplay(t *testing.T, m *Manager, h records.Header) {
	t.Helper()
	if err := m.Replay(h); err != nil {
		t.Fatal(err)
	}
}

func TestSnapshotRoundTripThroughFiles(t *testing.T) {
	dir := t.TempDir()
	now := time.UnixMilli(1_700_000_100_000)
	ts := now.UnixMilli()
	m := newTestManager(t, dir, now)
	mustReplay(t, m, dataBatch(1, 0, 0, 3, 0, ts, false))
	mustReplay(t, m, dataBatch(1, 0, 3, 2, 3, ts, false))
	mustReplay(t, m, dataBatch(2, 4, 10, 1, 5, ts, true))
	if err := m.TakeSnapshot(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "00000000000000000006.snapshot")); err != nil {
		t.Fatalf("snapshot file: %v", err)
	}

	re := newTestManager(t, dir, now)
	from, err := re.TruncateAndReload(0, 6)
	if err != nil || from != 6 {
		t.Fatalf("reload: from %d, err %v", from, err)
	}
	e1, _ := re.Entry(1)
	if e1.ProducerEpoch != 0 || e1.LastSeq() != 4 || e1.LastDataOffset() != 4 || len(e1.Batches()) != 1 {
		t.Fatalf("producer 1 after reload: %v", &e1)
	}
	if fus, ok := re.FirstUnstableOffset(); !ok || fus != 5 {
		t.Fatalf("first unstable %d %t, want 5", fus, ok)
	}
	// Sequences continue from the snapshot; the last batch is still a duplicate.
	if v, err := re.Check(dataBatch(1, 0, 3, 2, 6, ts, false)); err != nil || !v.Duplicate || v.FirstOffset != 3 {
		t.Fatalf("duplicate after reload: %+v %v", v, err)
	}
	if _, err := re.Check(dataBatch(1, 0, 5, 1, 6, ts, false)); err != nil {
		t.Fatalf("next sequence after reload: %v", err)
	}
}

func TestLoadLatestSkipsCorruptAndExpired(t *testing.T) {
	dir := t.TempDir()
	now := time.UnixMilli(10_000_000)
	m := newTestManager(t, dir, now)
	mustReplay(t, m, dataBatch(1, 0, 0, 1, 0, now.UnixMilli(), false))
	if err := m.TakeSnapshot(); err != nil { // at 1
		t.Fatal(err)
	}
	mustReplay(t, m, dataBatch(2, 0, 0, 1, 1, now.UnixMilli()-DefaultProducerIDExpirationMs, false))
	if err := m.TakeSnapshot(); err != nil { // at 2
		t.Fatal(err)
	}
	mustReplay(t, m, dataBatch(3, 0, 0, 1, 2, now.UnixMilli(), false))
	if err := m.TakeSnapshot(); err != nil { // at 3
		t.Fatal(err)
	}
	if offs, _ := m.SnapshotOffsets(); !reflect.DeepEqual(offs, []int64{1, 2, 3}) {
		t.Fatalf("snapshots %v", offs)
	}
	// Damage the newest snapshot; leave a torn temporary file behind.
	newest := filepath.Join(dir, SnapshotFileName(3))
	b, _ := os.ReadFile(newest)
	b[len(b)-1] ^= 1
	if err := os.WriteFile(newest, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, SnapshotFileName(4)+".tmp"), []byte{0, 1}, 0o644); err != nil {
		t.Fatal(err)
	}

	re := newTestManager(t, dir, now)
	from, err := re.LoadLatest(0)
	if err != nil || from != 2 {
		t.Fatalf("load: from %d err %v", from, err)
	}
	if ids := re.ProducerIDs(); !reflect.DeepEqual(ids, []int64{1}) {
		t.Fatalf("producers %v, want [1] (2 expired, 3 only in the corrupt snapshot)", ids)
	}
	names, _ := vfs.Default.List(dir)
	if !reflect.DeepEqual(names, []string{SnapshotFileName(1), SnapshotFileName(2)}) {
		t.Fatalf("files left %v", names)
	}
}

func TestTruncateAndDeleteSnapshots(t *testing.T) {
	dir := t.TempDir()
	now := time.UnixMilli(10_000_000)
	m := newTestManager(t, dir, now)
	for i := int64(0); i < 5; i++ {
		mustReplay(t, m, dataBatch(1, 0, int32(i), 1, i, now.UnixMilli(), false))
		if err := m.TakeSnapshot(); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.TakeSnapshot(); err != nil { // nothing new: no file
		t.Fatal(err)
	}
	if offs, _ := m.SnapshotOffsets(); !reflect.DeepEqual(offs, []int64{1, 2, 3, 4, 5}) {
		t.Fatalf("snapshots %v", offs)
	}
	if err := m.DeleteSnapshotsBelow(2); err != nil {
		t.Fatal(err)
	}
	// The log is truncated to [2, 4): snapshots at 2 (the start) and 5 go.
	from, err := m.TruncateAndReload(2, 4)
	if err != nil || from != 4 {
		t.Fatalf("truncate: from %d err %v", from, err)
	}
	if offs, _ := m.SnapshotOffsets(); !reflect.DeepEqual(offs, []int64{3, 4}) {
		t.Fatalf("snapshots after truncation %v", offs)
	}
	if e, _ := m.Entry(1); e.LastSeq() != 3 {
		t.Fatalf("state after truncation: %v", &e)
	}
	// Already at the end: nothing reloads, the log start moves the map end.
	if from, err := m.TruncateAndReload(6, 4); err != nil || from != 6 {
		t.Fatalf("start past end: from %d err %v", from, err)
	}
	if err := m.TruncateFullyAndStartAt(9); err != nil {
		t.Fatal(err)
	}
	if offs, _ := m.SnapshotOffsets(); len(offs) != 0 || m.Len() != 0 || m.MapEndOffset() != 9 {
		t.Fatalf("after full truncation: snapshots %v producers %d end %d", offs, m.Len(), m.MapEndOffset())
	}
}

// TestRecoveryRebuildsState follows the recipe in the package doc: the
// rebuilt state equals the state of a manager that saw every batch.
func TestRecoveryRebuildsState(t *testing.T) {
	dir := t.TempDir()
	now := time.UnixMilli(10_000_000)
	ts := now.UnixMilli()
	log := []records.Header{
		dataBatch(1, 0, 0, 2, 0, ts, false),
		dataBatch(2, 0, 0, 1, 2, ts, true),
		dataBatch(1, 0, 2, 2, 3, ts, false),
		dataBatch(2, 0, 1, 1, 5, ts, true),
		dataBatch(1, 0, 4, 1, 6, ts, false),
	}
	live := newTestManager(t, dir, now)
	for i, h := range log {
		a := live.BeginAppend(OriginClient)
		if _, err := a.AddBatch(h); err != nil {
			t.Fatal(err)
		}
		a.Commit()
		if i == 1 { // a segment roll after offset 2
			if err := live.TakeSnapshot(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Unclean stop: the snapshot at 3 survives; rebuild up to offset 7.
	re := newTestManager(t, dir, now)
	from, err := re.TruncateAndReload(0, 7)
	if err != nil || from != 3 {
		t.Fatalf("reload: from %d err %v", from, err)
	}
	for _, h := range log {
		if h.BaseOffset >= from {
			mustReplay(t, re, h)
		}
	}
	re.UpdateMapEndOffset(7)
	for _, id := range []int64{1, 2} {
		got, _ := re.Entry(id)
		want, _ := live.Entry(id)
		// The snapshot kept one batch per producer; compare what it restores.
		if got.ProducerEpoch != want.ProducerEpoch || got.LastSeq() != want.LastSeq() ||
			got.LastDataOffset() != want.LastDataOffset() || got.CurrentTxnFirstOffset != want.CurrentTxnFirstOffset {
			t.Errorf("producer %d: rebuilt %v, live %v", id, &got, &want)
		}
	}
	if fus, ok := re.FirstUnstableOffset(); !ok || fus != 2 {
		t.Fatalf("first unstable %d %t", fus, ok)
	}
}
