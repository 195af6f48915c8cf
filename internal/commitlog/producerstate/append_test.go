package producerstate

import "testing"

// TestAppendOfSeveralProducers stages batches of three producers in one
// Append (the first one staged inline, the others in the map; one producer
// twice, one new, one transactional) and checks what Commit leaves, and
// that an abandoned Append leaves nothing.
func TestAppendOfSeveralProducers(t *testing.T) {
	m := New(Options{Name: "t-0"})
	mustReplay(t, m, dataBatch(1, 0, 0, 2, 0, 100, false))
	mustReplay(t, m, dataBatch(2, 3, 0, 2, 2, 100, false))

	abandoned := m.BeginAppend(OriginClient)
	for _, h := range [...]struct {
		pid int64
		seq int32
	}{{7, 0}, {1, 2}} {
		if _, err := abandoned.AddBatch(dataBatch(h.pid, 0, h.seq, 2, 4, 200, false)); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := m.producers[7]; ok || m.producers[1].LastSeq() != 1 {
		t.Fatalf("an abandoned append changed the state: %v", m.producers)
	}

	a := m.BeginAppend(OriginClient)
	batches := []struct {
		pid   int64
		epoch int16
		seq   int32
		txn   bool
	}{{2, 3, 2, false}, {1, 0, 2, false}, {9, 0, 0, true}, {2, 3, 4, false}}
	offset := int64(4)
	for _, b := range batches {
		if _, err := a.AddBatch(dataBatch(b.pid, b.epoch, b.seq, 2, offset, 300+offset, b.txn)); err != nil {
			t.Fatalf("batch of producer %d: %v", b.pid, err)
		}
		offset += 2
	}
	if _, err := a.AddBatch(dataBatch(1, 0, 9, 2, offset, 400, false)); err == nil {
		t.Fatal("out-of-sequence batch of a producer staged second was accepted")
	}
	a.Commit()

	if e := m.producers[2]; e.LastSeq() != 5 || e.LastDataOffset() != 11 || len(e.batches) != 3 {
		t.Fatalf("producer 2 after commit: %v", e)
	}
	if e := m.producers[1]; e.LastSeq() != 3 || e.LastDataOffset() != 7 || len(e.batches) != 2 {
		t.Fatalf("producer 1 after commit: %v", e)
	}
	e9 := m.producers[9]
	if e9 == nil || e9.CurrentTxnFirstOffset != 8 || m.ongoing[8] != 9 {
		t.Fatalf("producer 9 after commit: %v, ongoing %v", e9, m.ongoing)
	}
	if m.mapEndOffset != 12 {
		t.Fatalf("map end offset %d, want 12", m.mapEndOffset)
	}
	// The new producer's entry must not share the Append's staging storage.
	next := m.BeginAppend(OriginClient)
	if _, err := next.AddBatch(dataBatch(9, 0, 2, 2, 12, 500, true)); err != nil {
		t.Fatal(err)
	}
	if e9.LastSeq() != 1 {
		t.Fatalf("staging a later append changed the committed entry: %v", e9)
	}
}
