package commitlog

import (
	"errors"
	"runtime"
	"testing"

	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/records/recordstest"
)

// bytesAllocated runs f and returns what the process allocated meanwhile.
func bytesAllocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestTimestampLookupsOverHeaderBomb: ListOffsets by timestamp, and
// MAX_TIMESTAMP, that land in a record of millions of headers cost the
// batch's decompressed bytes, not a list of its headers, and the budget
// they held is returned.
func TestTimestampLookupsOverHeaderBomb(t *testing.T) {
	const headers = 4 << 20
	e := newMemEnv(t)
	opts := testOptions()
	opts.SegmentBytes = 1 << 20
	l := e.open(opts, StartState{})
	defer l.Close()
	budget := records.NewBudget(64 << 20)
	l.decoder = records.NewDecoder(budget, 0)
	ts := testStart.UnixMilli()
	if _, err := l.Append(makeBatch(batchSpec{records: 3, valueSize: 10, timestamp: ts}), 0); err != nil {
		t.Fatal(err)
	}
	bomb, err := recordstest.HeaderBomb(headers, records.ZstdCompression, ts+100)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(bomb, 0); err != nil {
		t.Fatal(err)
	}
	var at, maxAt TimestampOffset
	var ok, maxOK bool
	var err1, err2 error
	got := bytesAllocated(func() {
		at, ok, err1 = l.OffsetForTimestamp(ts + 50)
		maxAt, maxOK, err2 = l.LastTimestampOffset()
	})
	if err1 != nil || err2 != nil || !ok || !maxOK {
		t.Fatalf("lookups: %v %v (found %v %v)", err1, err2, ok, maxOK)
	}
	if at != (TimestampOffset{Offset: 3, Timestamp: ts + 100}) || maxAt != at {
		t.Fatalf("lookups found %+v and %+v, want offset 3 at %d", at, maxAt, ts+100)
	}
	// Two lookups, each decoding the bomb's 8 MiB once.
	if limit := uint64(2*(2*headers) + 4<<20); got > limit {
		t.Fatalf("two lookups allocated %d bytes, more than %d", got, limit)
	}
	if now, peak := budget.InUse(); now != 0 || peak == 0 {
		t.Fatalf("budget in use %d, peak %d", now, peak)
	}
}

// TestUndecodableBatchFailsOnlyItsLookup: a batch on disk whose records
// do not decode (written by an older build, or damaged under a valid CRC)
// fails the lookups that reach it with ErrCorruptBatch, and nothing else:
// the log stays online and earlier timestamps are found.
func TestUndecodableBatchFailsOnlyItsLookup(t *testing.T) {
	e := newMemEnv(t)
	opts := testOptions()
	opts.SegmentBytes = 1 << 20
	l := e.open(opts, StartState{})
	defer l.Close()
	ts := testStart.UnixMilli()
	if _, err := l.Append(makeBatch(batchSpec{records: 2, valueSize: 10, timestamp: ts}), 0); err != nil {
		t.Fatal(err)
	}
	poison, err := recordstest.DecompressionBomb(records.GzipCompression, 16<<10, ts+100)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(poison, 0); err != nil {
		t.Fatal(err)
	}
	for name, lookup := range map[string]func() (TimestampOffset, bool, error){
		"timestamp":     func() (TimestampOffset, bool, error) { return l.OffsetForTimestamp(ts + 50) },
		"max timestamp": l.LastTimestampOffset,
	} {
		if _, _, err := lookup(); !errors.Is(err, ErrCorruptBatch) {
			t.Fatalf("%s lookup into the undecodable batch: %v", name, err)
		}
	}
	if l.Offline() {
		t.Fatal("an undecodable batch took the log offline")
	}
	reported := 0
	l.corrupt.Range(func(k, _ any) bool {
		if _, ok := k.(undecodableKey); ok {
			reported++
		}
		return true
	})
	if reported != 1 {
		t.Fatalf("the undecodable batch was reported %d times, want once", reported)
	}
	if at, ok, err := l.OffsetForTimestamp(ts + 1); err != nil || !ok || at.Offset != 1 {
		t.Fatalf("lookup before the batch: %+v %v %v", at, ok, err)
	}
}
