package producerstate

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecodeSnapshot feeds arbitrary bytes to the snapshot reader: it must
// never panic, must reject with ErrCorruptSnapshot only, and whatever it
// accepts must encode back to the same bytes once sorted and deduplicated.
// Seeds live in testdata/fuzz/FuzzDecodeSnapshot.
func FuzzDecodeSnapshot(f *testing.F) {
	f.Add(EncodeSnapshot(nil))
	f.Add(EncodeSnapshot(fixtureEntries()))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecode(t, b)
		// Most random bytes fail the CRC; fixing it lets the fuzzer reach the
		// parser behind it.
		if len(b) >= snapshotEntryAt {
			fixed := bytes.Clone(b)
			recrc(fixed)
			checkDecode(t, fixed)
		}
	})
}

func checkDecode(t *testing.T, b []byte) {
	t.Helper()
	entries, err := DecodeSnapshot(b)
	if err != nil {
		if !errors.Is(err, ErrCorruptSnapshot) {
			t.Fatalf("error %v is not ErrCorruptSnapshot", err)
		}
		return
	}
	seen := map[int64]bool{}
	sortedUnique := true
	for i, e := range entries {
		if seen[e.ProducerID] || (i > 0 && entries[i-1].ProducerID > e.ProducerID) {
			sortedUnique = false
		}
		seen[e.ProducerID] = true
	}
	again := EncodeSnapshot(entries)
	if sortedUnique && !bytes.Equal(again, b) && canonicalTxnOffsets(entries, b) {
		t.Fatalf("re-encoding changed the bytes:\n%x\n%x", b, again)
	}
	if _, err := DecodeSnapshot(again); err != nil {
		t.Fatalf("re-encoded snapshot does not decode: %v", err)
	}
}

// canonicalTxnOffsets reports whether every stored field survives a round
// trip unchanged: decoding folds every negative current_txn_first_offset to
// -1 and drops the sequence, delta of an entry without a batch, so bytes
// that used other values legitimately re-encode differently.
func canonicalTxnOffsets(entries []*Entry, b []byte) bool {
	for i, e := range entries {
		r := b[snapshotHeadSize+i*snapshotEntrySize:]
		if int64(be64(r[38:])) != e.CurrentTxnFirstOffset {
			return false
		}
		if e.IsEmpty() && (be32(r[10:]) != 0xffffffff || be32(r[22:]) != 0 || int64(be64(r[14:])) != -1) {
			return false
		}
	}
	return true
}

func be32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}
func be64(b []byte) uint64 { return uint64(be32(b))<<32 | uint64(be32(b[4:])) }
