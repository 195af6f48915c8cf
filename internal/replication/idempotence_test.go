package replication

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/records/recordstest"
)

func idempotentBatch(t *testing.T, producerID int64, epoch int16, seq int32, n int) []byte {
	t.Helper()
	return recordstest.Batch(t, recordstest.N(n, func(i int) recordstest.Record {
		return recordstest.Record{Timestamp: testStart.UnixMilli(), Value: []byte{byte(i)}}
	}), recordstest.Producer(producerID, epoch, seq))
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
