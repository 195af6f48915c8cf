package replication

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"sluice/internal/records"
)

func idempotentBatch(t *testing.T, producerID int64, epoch int16, seq int32, n int) []byte {
	t.Helper()
	o := records.NonIdempotent(records.NoCompression)
	o.ProducerID, o.ProducerEpoch, o.BaseSequence = producerID, epoch, seq
	b := records.NewBuilder(o)
	for i := range n {
		b.Add(testStart.UnixMilli(), nil, []byte{byte(i)}, nil)
	}
	out, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestIdempotentProduce: a retried batch is acknowledged with its original
// offsets and not written twice; a sequence gap is refused.
func TestIdempotentProduce(t *testing.T) {
	f := newFixture(t, nil)
	first := f.produce(t, -1, AppendPartition{TP: tp("t", 0), Records: idempotentBatch(t, 42, 0, 0, 3)})[0]
	wantCode(t, "first", first.Err, nil)
	retry := f.produce(t, -1, AppendPartition{TP: tp("t", 0), Records: idempotentBatch(t, 42, 0, 0, 3)})[0]
	wantCode(t, "retry", retry.Err, nil)
	if retry.FirstOffset != first.FirstOffset || retry.LastOffset != first.LastOffset {
		t.Fatalf("retry acknowledged at %d-%d, original at %d-%d", retry.FirstOffset, retry.LastOffset, first.FirstOffset, first.LastOffset)
	}
	gap := f.produce(t, -1, AppendPartition{TP: tp("t", 0), Records: idempotentBatch(t, 42, 0, 7, 1)})[0]
	wantCode(t, "sequence gap", gap.Err, kerr.OutOfOrderSequenceNumber)
	next := f.produce(t, -1, AppendPartition{TP: tp("t", 0), Records: idempotentBatch(t, 42, 0, 3, 1)})[0]
	wantCode(t, "next in sequence", next.Err, nil)
	p, _ := f.rm.Partition(tp("t", 0))
	if leo := p.State().LogEndOffset; leo != 4 || next.FirstOffset != 3 {
		t.Fatalf("log end offset %d, next at %d; want 4 and 3", leo, next.FirstOffset)
	}
}
