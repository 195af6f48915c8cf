package commitlog

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/sluice-io/sluice/internal/vfs"
)

// Layout of a .txnindex entry (Kafka's AbortedTxn, version 0).
const (
	txnIndexSuffix    = ".txnindex"
	txnIndexEntrySize = 34 // version int16, producerId, firstOffset, lastOffset, lastStableOffset int64
	txnIndexVersion   = 0
)

// AbortedTxn is an aborted transaction as the transaction index records it
// and a read_committed fetch reports it: its producer, first offset, the
// offset of its ABORT marker (LastOffset) and the last stable offset when it
// completed.
type AbortedTxn struct {
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64
	LastStableOffset int64
}

// txnIndex is a segment's .txnindex: the aborted transactions whose marker
// is in the segment, in marker order. Aborts are rare, so the entries are
// kept in memory and the file is created only for the first one, as Kafka
// creates it lazily.
type txnIndex struct {
	fsys vfs.FS
	path string

	mu      sync.Mutex
	file    vfs.File // nil until the file exists and is needed
	entries []AbortedTxn
}

// openTxnIndex loads the index at path if it exists. A partial or
// unknown-version tail (a torn write) is dropped.
func openTxnIndex(fsys vfs.FS, path string) (*txnIndex, error) {
	x := &txnIndex{fsys: fsys, path: path}
	data, err := vfs.ReadFile(fsys, path)
	if vfs.IsNotExist(err) {
		return x, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read transaction index %s: %w", path, err)
	}
	x.entries = decodeTxnIndex(data)
	return x, nil
}

// decodeTxnIndex decodes whole entries of version 0, stopping at the first
// that is not one.
func decodeTxnIndex(data []byte) []AbortedTxn {
	var out []AbortedTxn
	for len(data) >= txnIndexEntrySize {
		be := binary.BigEndian
		if int16(be.Uint16(data)) != txnIndexVersion {
			break
		}
		out = append(out, AbortedTxn{
			ProducerID:       int64(be.Uint64(data[2:])),
			FirstOffset:      int64(be.Uint64(data[10:])),
			LastOffset:       int64(be.Uint64(data[18:])),
			LastStableOffset: int64(be.Uint64(data[26:])),
		})
		data = data[txnIndexEntrySize:]
	}
	return out
}

func encodeTxnIndexEntry(t AbortedTxn) []byte {
	b := make([]byte, 0, txnIndexEntrySize)
	b = binary.BigEndian.AppendUint16(b, txnIndexVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(t.ProducerID))
	b = binary.BigEndian.AppendUint64(b, uint64(t.FirstOffset))
	b = binary.BigEndian.AppendUint64(b, uint64(t.LastOffset))
	return binary.BigEndian.AppendUint64(b, uint64(t.LastStableOffset))
}

func (x *txnIndex) openFileLocked() error {
	if x.file != nil {
		return nil
	}
	f, err := x.fsys.OpenReadWrite(x.path)
	if err != nil {
		return fmt.Errorf("open transaction index %s: %w", x.path, err)
	}
	x.file = f
	return nil
}

// append records an aborted transaction; one already recorded (same
// producer and marker offset, met again when recovery replays) is skipped.
func (x *txnIndex) append(t AbortedTxn) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, e := range x.entries {
		if e.ProducerID == t.ProducerID && e.LastOffset == t.LastOffset {
			return nil
		}
	}
	if n := len(x.entries); n > 0 && x.entries[n-1].LastOffset > t.LastOffset {
		return fmt.Errorf("transaction index %s: marker offset %d below the last %d", x.path, t.LastOffset, x.entries[n-1].LastOffset)
	}
	if err := x.openFileLocked(); err != nil {
		return err
	}
	if _, err := x.file.WriteAt(encodeTxnIndexEntry(t), int64(len(x.entries)*txnIndexEntrySize)); err != nil {
		return fmt.Errorf("write transaction index %s: %w", x.path, err)
	}
	x.entries = append(x.entries, t)
	return nil
}

// truncateTo drops the transactions whose marker is at or after offset.
func (x *txnIndex) truncateTo(offset int64) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	keep := len(x.entries)
	for keep > 0 && x.entries[keep-1].LastOffset >= offset {
		keep--
	}
	if keep == len(x.entries) {
		return nil
	}
	if err := x.openFileLocked(); err != nil {
		return err
	}
	if err := x.file.Truncate(int64(keep * txnIndexEntrySize)); err != nil {
		return fmt.Errorf("truncate transaction index %s: %w", x.path, err)
	}
	x.entries = x.entries[:keep]
	return nil
}

// collect returns the aborted transactions overlapping [fetchOffset,
// upperBound) and whether the search may stop here: an entry whose last
// stable offset reaches upperBound proves no later segment holds another
// (Kafka's TransactionIndex.collectAbortedTxns).
func (x *txnIndex) collect(fetchOffset, upperBound int64) ([]AbortedTxn, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []AbortedTxn
	for _, e := range x.entries {
		if e.LastOffset >= fetchOffset && e.FirstOffset < upperBound {
			out = append(out, e)
		}
		if e.LastStableOffset >= upperBound {
			return out, true
		}
	}
	return out, false
}

func (x *txnIndex) sync() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.file == nil {
		return nil
	}
	if err := x.file.Sync(); err != nil {
		return fmt.Errorf("sync transaction index %s: %w", x.path, err)
	}
	return nil
}

func (x *txnIndex) close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.file == nil {
		return nil
	}
	err := x.file.Close()
	x.file = nil
	if err != nil {
		return fmt.Errorf("close transaction index %s: %w", x.path, err)
	}
	return nil
}
