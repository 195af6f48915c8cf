package node

import (
	"testing"

	"sluice/internal/records"
)

func TestCommittedTailReadsBatchesFromAnOffset(t *testing.T) {
	tail := newCommittedTail(1 << 20)
	for off := int64(3); off < 8; off++ {
		if err := tail.add(off, 2, []byte{byte(off)}); err != nil {
			t.Fatal(err)
		}
	}
	data, ok, _ := tail.read(5, 1<<20)
	if !ok {
		t.Fatal("offset 5 not served")
	}
	var got []int64
	_, err := records.Batches(data, func(h records.Header, batch []byte) error {
		if h.PartitionLeaderEpoch != 2 {
			t.Errorf("batch %d epoch %d, want 2", h.BaseOffset, h.PartitionLeaderEpoch)
		}
		got = append(got, h.BaseOffset)
		return records.CheckCRC(batch)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != 5 || got[2] != 7 {
		t.Fatalf("batches from 5: %v, want [5 6 7]", got)
	}
	// maxBytes still returns one whole batch.
	if data, _, _ := tail.read(3, 1); len(data) == 0 {
		t.Fatal("a read below one batch's size returned nothing")
	}
	waitFor, ok, grew := tail.read(8, 1<<20)
	if !ok || len(waitFor) != 0 {
		t.Fatalf("read at the end: ok %t, %d bytes", ok, len(waitFor))
	}
	if err := tail.add(8, 3, []byte{8}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-grew:
	default:
		t.Fatal("adding an entry did not wake a reader at the end")
	}
}

func TestCommittedTailDropsOldEntriesPastItsBound(t *testing.T) {
	tail := newCommittedTail(3000)
	big := make([]byte, 1000)
	for off := int64(0); off < 4; off++ {
		if err := tail.add(off, 1, big); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok, _ := tail.read(0, 1<<20); ok {
		t.Fatal("offset 0 still served past the bound")
	}
	if tail.startOffset() < 1 {
		t.Fatalf("start offset %d after dropping", tail.startOffset())
	}
}

func TestCommittedTailFollowsSnapshots(t *testing.T) {
	tail := newCommittedTail(1 << 20)
	for off := int64(0); off < 6; off++ {
		if err := tail.add(off, 1, []byte{byte(off)}); err != nil {
			t.Fatal(err)
		}
	}
	tail.trimBefore(4)
	if _, ok, _ := tail.read(3, 1<<20); ok {
		t.Fatal("offset 3 served after trimming before 4")
	}
	if data, ok, _ := tail.read(4, 1<<20); !ok || len(data) == 0 {
		t.Fatal("offset 4 not served after trimming before 4")
	}
	tail.trimBefore(2) // behind the start: nothing changes
	if tail.startOffset() != 4 {
		t.Fatalf("start %d after a trim behind it, want 4", tail.startOffset())
	}
	tail.reset(10)
	if data, ok, _ := tail.read(10, 1<<20); !ok || len(data) != 0 || tail.startOffset() != 10 {
		t.Fatalf("after reset(10): ok %t, %d bytes, start %d", ok, len(data), tail.startOffset())
	}
	if _, ok, _ := tail.read(5, 1<<20); ok {
		t.Fatal("an entry before the restored snapshot is still served")
	}
}
