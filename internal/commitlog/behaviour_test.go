package commitlog

import (
	"bytes"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/records/recordstest"
)

// idempotentBatch is a batch of producer 42 with the given sequence.
func idempotentBatch(seq int32, n int) []byte {
	return makeBatch(batchSpec{records: n, valueSize: 10, timestamp: testStart.UnixMilli()}, recordstest.Producer(42, 0, seq))
}

func TestIdempotentDuplicateWritesNothing(t *testing.T) {
	env := newMemEnv(t)
	l := env.open(testOptions(), StartState{})
	first, err := l.Append(idempotentBatch(0, 3), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(idempotentBatch(3, 2), 0); err != nil {
		t.Fatal(err)
	}
	dup, err := l.Append(idempotentBatch(0, 3), 0)
	if err != nil {
		t.Fatal(err)
	}
	if !dup.Duplicate || dup.FirstOffset != first.FirstOffset || dup.LastOffset != first.LastOffset || l.LogEndOffset() != 5 {
		t.Fatalf("duplicate: %+v, LEO %d", dup, l.LogEndOffset())
	}
	if _, err := l.Append(idempotentBatch(9, 1), 0); err == nil {
		t.Fatal("out of order sequence accepted")
	}
	// The producer state survives a clean restart (snapshot) and a crash (replay).
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = env.open(testOptions(), StartState{CleanShutdown: true})
	if dup, err := l.Append(idempotentBatch(3, 2), 0); err != nil || !dup.Duplicate {
		t.Fatalf("duplicate after clean restart: %+v %v", dup, err)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	env.fs.(interface{ Crash() }).Crash()
	l = env.open(testOptions(), StartState{})
	defer l.Close()
	if dup, err := l.Append(idempotentBatch(3, 2), 0); err != nil || !dup.Duplicate {
		t.Fatalf("duplicate after crash: %+v %v", dup, err)
	}
	if info, err := l.Append(idempotentBatch(5, 1), 0); err != nil || info.FirstOffset != 5 {
		t.Fatalf("next sequence after crash: %+v %v", info, err)
	}
}

func TestSegmentMsRollAndJitter(t *testing.T) {
	env := newMemEnv(t)
	opts := testOptions()
	opts.SegmentBytes = 1 << 20
	opts.SegmentMs = time.Hour
	l := env.open(opts, StartState{})
	defer l.Close()
	ts := testStart.UnixMilli()
	appendAt := func(ms int64) {
		t.Helper()
		if _, err := l.Append(makeBatch(batchSpec{records: 1, valueSize: 1, timestamp: ms}), 0); err != nil {
			t.Fatal(err)
		}
	}
	appendAt(ts)
	appendAt(ts + time.Hour.Milliseconds())
	if n := len(l.Segments()); n != 1 {
		t.Fatalf("rolled at exactly segment.ms: %d segments", n)
	}
	appendAt(ts + time.Hour.Milliseconds() + 1)
	if n := len(l.Segments()); n != 2 {
		t.Fatalf("no roll after segment.ms: %d segments", n)
	}
	// With jitter the roll comes up to segment.jitter.ms earlier, never later.
	opts.SegmentJitterMs = 30 * time.Minute
	l.SetOptions(opts)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	base := ts + 2*time.Hour.Milliseconds()
	appendAt(base)
	segs := len(l.Segments())
	appendAt(base + time.Hour.Milliseconds() + 1)
	if len(l.Segments()) != segs+1 {
		t.Fatal("jitter delayed a roll past segment.ms")
	}
}

func TestFlushMessagesAdvancesRecoveryPoint(t *testing.T) {
	env := newMemEnv(t)
	opts := testOptions()
	opts.FlushMessages = 5
	l := env.open(opts, StartState{})
	defer l.Close()
	for i := 0; i < 4; i++ {
		if _, err := l.Append(makeBatch(batchSpec{records: 1, valueSize: 1}), 0); err != nil {
			t.Fatal(err)
		}
	}
	if rp := l.RecoveryPoint(); rp != 0 {
		t.Fatalf("recovery point %d before flush.messages reached", rp)
	}
	if _, err := l.Append(makeBatch(batchSpec{records: 1, valueSize: 1}), 0); err != nil {
		t.Fatal(err)
	}
	if rp := l.RecoveryPoint(); rp != 5 {
		t.Fatalf("recovery point %d after flush.messages, want 5", rp)
	}
	opts.FlushMessages = DefaultOptions().FlushMessages
	opts.FlushMs = time.Minute
	l.SetOptions(opts)
	l.Append(makeBatch(batchSpec{records: 1, valueSize: 1}), 0)
	if err := l.FlushIfDue(env.clk.Now().Add(30 * time.Second)); err != nil || l.RecoveryPoint() != 5 {
		t.Fatalf("flushed before flush.ms: %v rp %d", err, l.RecoveryPoint())
	}
	if err := l.FlushIfDue(env.clk.Now().Add(2 * time.Minute)); err != nil || l.RecoveryPoint() != 6 {
		t.Fatalf("not flushed after flush.ms: %v rp %d", err, l.RecoveryPoint())
	}
}

func TestReadOfDeletedSegmentCompletesWithinDelay(t *testing.T) {
	env := newMemEnv(t)
	opts := testOptions()
	opts.RetentionBytes = 0
	l := env.open(opts, StartState{})
	defer l.Close()
	for i := 0; i < 10; i++ {
		l.Append(makeBatch(batchSpec{records: 2, valueSize: 300}), 0)
	}
	res, err := l.Read(0, 1<<20, l.LogEndOffset(), true)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := res.Bytes()
	if n, err := l.ApplyRetention(env.clk.Now()); err != nil || n == 0 {
		t.Fatalf("retention deleted %d: %v", n, err)
	}
	if _, err := l.Read(0, 100, l.LogEndOffset(), true); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read below new log start: %v", err)
	}
	got, err := res.Bytes()
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("a read of a deleted segment failed within file.delete.delay.ms: %v", err)
	}
	if err := l.RemoveDeletedSegments(env.clk.Now().Add(opts.FileDeleteDelay)); err != nil {
		t.Fatal(err)
	}
	if _, err := res.Bytes(); err == nil {
		t.Fatal("segment file still readable after its removal")
	}
}

// TestConcurrentReadsDuringAppends runs readers against a log being
// appended to, rolled and trimmed by retention (run with -race).
func TestConcurrentReadsDuringAppends(t *testing.T) {
	env := newMemEnv(t)
	opts := testOptions()
	opts.RetentionBytes = 20000
	l := env.open(opts, StartState{})
	defer l.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				off := l.LogStartOffset()
				res, err := l.Read(off, 4096, l.LogEndOffset(), true)
				if err != nil {
					if errors.Is(err, ErrOffsetOutOfRange) {
						continue // retention moved the start meanwhile
					}
					t.Error(err)
					return
				}
				data, err := res.Bytes()
				if err != nil {
					continue // segment removed under the read after the delay
				}
				if _, err := records.Batches(data, func(_ records.Header, b []byte) error { return records.CheckCRC(b) }); err != nil {
					t.Errorf("served a bad batch: %v", err)
					return
				}
				l.OffsetForTimestamp(testStart.UnixMilli())
			}
		}()
	}
	for i := 0; i < 400; i++ {
		if _, err := l.Append(makeBatch(batchSpec{records: 3, valueSize: 100, timestamp: testStart.UnixMilli() + int64(i)}), 0); err != nil {
			t.Fatal(err)
		}
		if i%50 == 0 {
			if _, err := l.ApplyRetention(env.clk.Now()); err != nil {
				t.Fatal(err)
			}
		}
	}
	close(stop)
	wg.Wait()
}
