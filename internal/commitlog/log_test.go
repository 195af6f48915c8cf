package commitlog

import (
	"bytes"
	"errors"
	"testing"

	"github.com/sluice-io/sluice/internal/records"
)

func TestAppendAssignsOffsetsAndReads(t *testing.T) {
	env := newMemEnv(t)
	l := env.open(testOptions(), StartState{})
	defer l.Close()
	var want [][]byte
	for i := 0; i < 20; i++ {
		b := makeBatch(batchSpec{records: 3, valueSize: 50, timestamp: testStart.UnixMilli() + int64(i*10)})
		info, err := l.Append(b, 7)
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		if info.FirstOffset != int64(i*3) || info.LastOffset != int64(i*3+2) {
			t.Fatalf("append %d: offsets %d-%d", i, info.FirstOffset, info.LastOffset)
		}
		want = append(want, b)
	}
	if got := l.LogEndOffset(); got != 60 {
		t.Fatalf("LEO %d", got)
	}
	if len(l.Segments()) < 2 {
		t.Fatalf("expected rolls with 4 KiB segments, got %d segments", len(l.Segments()))
	}
	for off := int64(0); off < 60; off++ {
		res, err := l.Read(off, 1, 60, true)
		if err != nil {
			t.Fatalf("read %d: %v", off, err)
		}
		got, err := res.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want[off/3]) {
			t.Fatalf("read %d: got other bytes than batch %d", off, off/3)
		}
		h, _ := records.ParseHeader(got)
		if h.BaseOffset != off/3*3 || h.PartitionLeaderEpoch != 7 {
			t.Fatalf("read %d: header %+v", off, h)
		}
	}
	res, err := l.Read(0, 1, 60, false)
	if err != nil || res.Size != 0 {
		t.Fatalf("read without minOneBatch below one batch: %v size %d", err, res.Size)
	}
	res, err = l.Read(0, 1<<20, 9, false)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := res.Bytes()
	n := 0
	records.Batches(got, func(h records.Header, _ []byte) error {
		if h.NextOffset() > 9 {
			t.Errorf("batch %d passes maxOffset", h.BaseOffset)
		}
		n++
		return nil
	})
	if n != 3 {
		t.Fatalf("read bounded by maxOffset 9: %d batches, want 3", n)
	}
	if _, err := l.Read(61, 100, 61, true); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read above LEO: %v", err)
	}
	if res, err := l.Read(60, 100, 60, true); err != nil || res.Size != 0 {
		t.Fatalf("read at LEO: %v %d", err, res.Size)
	}
}

func TestAppendRejectsCorruptAndTooLarge(t *testing.T) {
	env := newMemEnv(t)
	opts := testOptions()
	opts.MaxMessageBytes = 500
	l := env.open(opts, StartState{})
	defer l.Close()
	b := makeBatch(batchSpec{records: 2, valueSize: 10})
	b[len(b)-1] ^= 0xff
	if _, err := l.Append(b, 0); !errors.Is(err, ErrCorruptBatch) {
		t.Fatalf("corrupt CRC: %v", err)
	}
	good := makeBatch(batchSpec{records: 2, valueSize: 10})
	if _, err := l.Append(append(good, 1, 2, 3), 0); !errors.Is(err, ErrCorruptBatch) {
		t.Fatalf("trailing bytes: %v", err)
	}
	if _, err := l.Append(makeBatch(batchSpec{records: 2, valueSize: 600}), 0); !errors.Is(err, ErrRecordBatchTooLarge) {
		t.Fatalf("too large: %v", err)
	}
	if l.LogEndOffset() != 0 {
		t.Fatalf("a refused append moved the LEO to %d", l.LogEndOffset())
	}
}

func TestFollowerAppendKeepsOffsets(t *testing.T) {
	env := newMemEnv(t)
	l := env.open(testOptions(), StartState{})
	defer l.Close()
	b := makeBatch(batchSpec{records: 2, valueSize: 10})
	records.SetBaseOffset(b, 100)
	records.SetPartitionLeaderEpoch(b, 3)
	if _, err := l.AppendAsFollower(b); err != nil {
		t.Fatal(err)
	}
	if l.LogEndOffset() != 102 || len(l.Segments()) != 1 {
		t.Fatalf("LEO %d, segments %+v", l.LogEndOffset(), l.Segments())
	}
	records.SetBaseOffset(b, 101)
	if _, err := l.AppendAsFollower(b); !errors.Is(err, ErrOutOfOrderOffsets) {
		t.Fatalf("overlapping follower append: %v", err)
	}
}

func TestTruncateAndReopen(t *testing.T) {
	env := newMemEnv(t)
	l := env.open(testOptions(), StartState{})
	for i := 0; i < 30; i++ {
		if _, err := l.Append(makeBatch(batchSpec{records: 2, valueSize: 100, timestamp: int64(i)}), 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.TruncateTo(31); err != nil {
		t.Fatal(err)
	}
	if got := l.LogEndOffset(); got != 30 {
		t.Fatalf("truncate into a batch: LEO %d, want 30", got)
	}
	if _, err := l.Append(makeBatch(batchSpec{records: 1, valueSize: 1}), 2); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = env.open(testOptions(), StartState{CleanShutdown: true})
	defer l.Close()
	if got := l.LogEndOffset(); got != 31 {
		t.Fatalf("LEO after reopen %d", got)
	}
	if err := l.TruncateFullyAndStartAt(500); err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() != 500 || l.LogEndOffset() != 500 {
		t.Fatalf("after full truncation: [%d, %d]", l.LogStartOffset(), l.LogEndOffset())
	}
}
