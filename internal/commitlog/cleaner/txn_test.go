package cleaner

import (
	"testing"

	"sluice/internal/clock"
	"sluice/internal/commitlog"
	"sluice/internal/records"
	"sluice/internal/records/recordstest"
)

func TestAbortedTransactionDataDropsAndDoesNotShadowCommitted(t *testing.T) {
	fs := durableMem(t)
	clk := clock.NewManual(testStart)
	l := openLog(t, fs, clk, compactOptions(), false)
	defer l.Close()
	m := model{}
	committed := kv{key: "a", value: "committed"}
	m.apply(appendRecords(t, l, clk, records.NoCompression, committed), committed)
	txn := []recordstest.Option{recordstest.Producer(9, 0, 0), recordstest.Transactional()}
	now := clk.Now().UnixMilli()
	batch := recordstest.Batch(t, []recordstest.Record{
		{Timestamp: now, Key: []byte("a"), Value: []byte("aborted")},
		{Timestamp: now, Key: []byte("b"), Value: []byte("aborted")},
	}, txn...)
	data, err := l.Append(batch, 0)
	if err != nil {
		t.Fatal(err)
	}
	marker := recordstest.Marker(t, false, 0, clk.Now().UnixMilli(), txn...)
	abort, err := l.AppendAsCoordinator(marker, 0)
	if err != nil {
		t.Fatal(err)
	}
	later := kv{key: "c", value: "after"}
	m.apply(appendRecords(t, l, clk, records.NoCompression, later), later)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	c := newCleaner(t, fs, &logSource{logs: []*commitlog.Log{l}}, clk)
	if !cleanOnce(t, c) {
		t.Fatal("not cleaned")
	}
	got, headers := readAll(t, l)
	checkAgainstModel(t, l, m)
	if len(got) != 2 {
		t.Fatalf("records %+v: want the committed a and c only", got)
	}
	var sawEmpty, sawMarker bool
	for _, h := range headers {
		switch {
		case h.IsControl():
			sawMarker = h.BaseOffset == abort.FirstOffset
		case h.ProducerID == 9:
			sawEmpty = h.RecordCount == 0 && h.BaseOffset == data.FirstOffset && h.LastOffsetDelta == 1
		}
	}
	if !sawMarker || !sawEmpty {
		t.Fatalf("batches %+v: want the ABORT marker kept and the aborted batch emptied (producer 9's last)", headers)
	}
	txns, err := l.CollectAbortedTxns(0, l.LogEndOffset())
	if err != nil || len(txns) != 1 || txns[0].ProducerID != 9 {
		t.Fatalf("aborted transactions after cleaning: %+v, %v; want producer 9's", txns, err)
	}
}
