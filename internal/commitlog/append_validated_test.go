package commitlog

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"

	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/records/recordstest"
)

// validated runs records.Validate over batch as a produce request would.
func validated(t *testing.T, batch []byte) *records.Validated {
	t.Helper()
	res, err := records.Validate(context.Background(), batch, records.ValidateOptions{
		NowMs: testStart.UnixMilli(), TimestampBeforeMaxMs: math.MaxInt64, TimestampAfterMaxMs: 3600000})
	if err != nil {
		t.Fatalf("validate: %v", err)
	}
	return &res.Validated
}

// AppendValidated writes what Append writes: the same offsets, epochs and
// bytes, from one parse and CRC pass.
func TestAppendValidatedMatchesAppend(t *testing.T) {
	byAppend, byValidated := newMemEnv(t).open(testOptions(), StartState{}), newMemEnv(t).open(testOptions(), StartState{})
	defer byAppend.Close()
	defer byValidated.Close()
	for i := range 20 { // testOptions roll every few batches
		spec := batchSpec{records: 1 + i%4, valueSize: 100, timestamp: testStart.UnixMilli() + int64(i)}
		want, err := byAppend.Append(makeBatch(spec), 3)
		if err != nil {
			t.Fatal(err)
		}
		got, err := byValidated.AppendValidated(validated(t, makeBatch(spec)), 3, LeaderAppend{})
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("batch %d: AppendValidated %+v, Append %+v", i, got, want)
		}
	}
	a, v := readAll(t, byAppend), readAll(t, byValidated)
	if len(a) != len(v) || len(a) != 20 {
		t.Fatalf("read %d and %d batches, want 20", len(a), len(v))
	}
	for i := range a {
		if !bytes.Equal(a[i], v[i]) {
			t.Fatalf("batch %d differs", i)
		}
	}
}

// The log still applies its own header checks to a Validated: the zero
// value and a batch above the log's max.message.bytes are refused.
func TestAppendValidatedRefuses(t *testing.T) {
	opts := testOptions()
	opts.MaxMessageBytes = 200
	l := newMemEnv(t).open(opts, StartState{})
	defer l.Close()
	if _, err := l.AppendValidated(&records.Validated{}, 0, LeaderAppend{}); !errors.Is(err, ErrCorruptBatch) {
		t.Fatalf("zero Validated: %v, want ErrCorruptBatch", err)
	}
	big := validated(t, makeBatch(batchSpec{records: 2, valueSize: 300, timestamp: testStart.UnixMilli()}))
	if _, err := l.AppendValidated(big, 0, LeaderAppend{}); !errors.Is(err, ErrRecordBatchTooLarge) {
		t.Fatalf("batch above max.message.bytes: %v, want ErrRecordBatchTooLarge", err)
	}
	if l.LogEndOffset() != 0 {
		t.Fatalf("log end offset %d after refusals", l.LogEndOffset())
	}
}

// The producer-state checks run on a Validated as on Append: a repeated
// idempotent batch is a duplicate with the original's offsets.
func TestAppendValidatedIdempotentDuplicate(t *testing.T) {
	l := newMemEnv(t).open(testOptions(), StartState{})
	defer l.Close()
	ts := testStart.UnixMilli()
	batch := func() []byte {
		return recordstest.Batch(t, recordstest.Values(ts, "a", "b"), recordstest.Producer(9, 0, 0), recordstest.LeaderEpoch(-1))
	}
	first, err := l.AppendValidated(validated(t, batch()), 0, LeaderAppend{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := l.AppendValidated(validated(t, batch()), 0, LeaderAppend{})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Duplicate || again.FirstOffset != first.FirstOffset || again.LastOffset != first.LastOffset || l.LogEndOffset() != 2 {
		t.Fatalf("repeat: %+v (first %+v, LEO %d), want a duplicate at the first's offsets", again, first, l.LogEndOffset())
	}
}
