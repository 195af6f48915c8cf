package commitlog

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/records/recordstest"
)

// FuzzTimestampLookup appends a batch of arbitrary records between two
// good ones and looks up timestamps in and around it (ListOffsets by
// timestamp and MAX_TIMESTAMP): a lookup either finds a record at or after
// its timestamp inside the log or fails with ErrCorruptBatch; the log stays
// online, the decoder's budget is returned, and the good batches stay
// readable. The input is [codec][record count, 4 bytes][records as stored];
// committed seeds include the 32-million-header bomb (refused on its
// declared 64 MB by the fuzzer's 16 MiB cap) and one of 256 Ki headers.
func FuzzTimestampLookup(f *testing.F) {
	good := makeBatch(batchSpec{records: 2, valueSize: 4, timestamp: testStart.UnixMilli() + 500})
	f.Add(append(binary.BigEndian.AppendUint32([]byte{records.NoCompression}, 2), good[records.HeaderSize:]...))
	f.Add([]byte{records.GzipCompression, 0, 0, 0, 1, 0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 5 {
			return
		}
		ts := testStart.UnixMilli()
		codec, count := int(data[0]%5), int32(binary.BigEndian.Uint32(data[1:5]))
		batch := recordstest.Assemble(recordstest.Options(recordstest.Compression(codec)), count, ts+100, ts+1000, data[5:])
		e := newMemEnv(t)
		opts := testOptions()
		opts.SegmentBytes = 8 << 20
		l := e.open(opts, StartState{})
		defer l.Close()
		budget := records.NewBudget(32 << 20)
		l.decoder = records.NewDecoder(budget, 16<<20)
		before := makeBatch(batchSpec{records: 2, valueSize: 4, timestamp: ts})
		after := makeBatch(batchSpec{records: 2, valueSize: 4, timestamp: ts + 2000})
		if _, err := l.Append(before, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(batch, 0); err != nil {
			return // the log refuses the frame itself
		}
		if _, err := l.Append(after, 0); err != nil {
			t.Fatal(err)
		}
		leo := l.LogEndOffset()
		check := func(what string, target int64, at TimestampOffset, ok bool, err error) {
			if err != nil {
				if !errors.Is(err, ErrCorruptBatch) {
					t.Fatalf("%s: %v", what, err)
				}
				return
			}
			if ok && (at.Offset < 0 || at.Offset >= leo || at.Timestamp < target) {
				t.Fatalf("%s: found %+v for %d in a log ending at %d", what, at, target, leo)
			}
		}
		for _, target := range []int64{ts, ts + 150, ts + 1000, ts + 2001, 1 << 62} {
			at, ok, err := l.OffsetForTimestamp(target)
			check("timestamp lookup", target, at, ok, err)
		}
		at, ok, err := l.LastTimestampOffset()
		check("max timestamp lookup", -1, at, ok, err)
		if l.Offline() {
			t.Fatal("a lookup took the log offline")
		}
		if now, _ := budget.InUse(); now != 0 {
			t.Fatalf("%d bytes of budget held", now)
		}
		if at, ok, err := l.OffsetForTimestamp(ts + 1); err != nil || !ok || at.Offset != 1 {
			t.Fatalf("lookup in the good batch before: %+v %v %v", at, ok, err)
		}
	})
}
