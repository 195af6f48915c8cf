package workload

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/testutil"
	"github.com/sluice-io/sluice/internal/verify/history"
)

// The final reader reads committed values only and still reaches the high
// watermark when the partition ends in a transaction marker (which a
// read_committed fetch does not hand out as a record).
func TestFinalReadEndsAtTransactionMarkers(t *testing.T) {
	c := startCluster(t, 1)
	cfg := testConfig(c, t, "final-txn")
	cfg.Partitions = 1
	runFor(t, 20*time.Second, func(ctx context.Context) error { return CreateTopic(ctx, cfg) })
	cl, err := NewClient(cfg, kgo.TransactionalID("final-test"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	txn := func(vals []string, commit kgo.TransactionEndTry) {
		t.Helper()
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: cfg.Topic, Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := cl.EndTransaction(ctx, commit); err != nil {
			t.Fatal(err)
		}
	}
	txn([]string{"c-0", "c-1", "c-2"}, kgo.TryCommit)
	txn([]string{"a-0", "a-1"}, kgo.TryAbort)

	// EndTxn answers before the coordinator writes the markers: wait for
	// the abort's marker, so the listed end is 7.
	adm := kadm.NewClient(cl)
	testutil.EventuallyNoError(t, 10*time.Second, func() error {
		lo, err := adm.ListEndOffsets(ctx, cfg.Topic)
		if err != nil {
			return err
		}
		if o, _ := lo.Lookup(cfg.Topic, 0); o.Offset != 7 {
			return fmt.Errorf("end offset %d", o.Offset)
		}
		return nil
	}, "the abort's marker written")

	rec := history.NewRecorder(time.Now, nil)
	runFor(t, 15*time.Second, func(ctx context.Context) error { return FinalRead(ctx, cfg, rec) })
	read, hw := finalPolls(rec)
	// Offsets: 3 committed values, their marker, 2 aborted values, theirs.
	if want := "[c-0@0 c-1@1 c-2@2]"; fmt.Sprint(read) != want || hw != 7 {
		t.Errorf("final read %v up to %d, want %s up to 7", read, hw, want)
	}

	// An end listed between the abort and its marker (6): every record
	// below it is aborted, and the first the client hands out is the
	// marker at 6, which finishes the partition.
	rec = history.NewRecorder(time.Now, nil)
	runFor(t, 15*time.Second, func(ctx context.Context) error {
		return finalConsume(ctx, cfg.withDefaults(), rec, map[int32]int64{0: 6})
	})
	if read, _ := finalPolls(rec); fmt.Sprint(read) != "[c-0@0 c-1@1 c-2@2]" {
		t.Errorf("final read up to 6: %v", read)
	}
}

// finalPolls are the values a final read recorded and the end it listed.
func finalPolls(rec *history.Recorder) (read []string, hw int64) {
	hw = -1
	for _, op := range rec.Ops() {
		switch op.Kind {
		case history.Poll:
			read = append(read, fmt.Sprintf("%s@%d", op.Value, op.Offset))
		case history.Final:
			hw = op.Offset
		}
	}
	return read, hw
}
