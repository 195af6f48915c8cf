package commitlog

import (
	"bytes"
	"encoding/binary"
	"log/slog"
	"testing"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/vfs"
)

// FuzzOffsetIndex loads arbitrary bytes as a .index file: loading keeps a
// strictly increasing prefix and lookups stay inside it, never panicking.
func FuzzOffsetIndex(f *testing.F) {
	f.Add([]byte{})
	f.Add(append(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 9), 611), make([]byte, 16)...))
	f.Add(bytes.Repeat([]byte{0, 0, 0, 1, 0, 0, 0, 2}, 3))
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := vfs.NewMem()
		if err := writeFile(fsys, "/x.index", data); err != nil {
			t.Fatal(err)
		}
		x, err := openOffsetIndex(fsys, "/x.index", 100, 1024)
		if err != nil {
			t.Fatal(err)
		}
		defer x.close()
		// Unloaded (an inactive segment's index): lookups read the file.
		for _, target := range []int64{-1, 0, 100, 150, 1 << 40} {
			x.lookup(target)
		}
		x.lastEntry()
		// Loaded (the active segment's): only the valid prefix is kept.
		if err := x.ensureResident(); err != nil {
			t.Fatal(err)
		}
		n := x.entries()
		if n*offsetIndexEntrySize > len(data) {
			t.Fatalf("%d entries from %d bytes", n, len(data))
		}
		prev := indexEntry{Offset: -1, Position: -1}
		for i := 0; i < n; i++ {
			e := x.decode(x.entry(i))
			if e.Offset <= prev.Offset || e.Position <= prev.Position {
				t.Fatalf("entry %d %+v not above %+v", i, e, prev)
			}
			if got := x.lookup(e.Offset); got != e {
				t.Fatalf("lookup(%d) = %+v, want %+v", e.Offset, got, e)
			}
			prev = e
		}
		for _, target := range []int64{-1, 0, 100, 101, 1 << 40} {
			if e := x.lookup(target); e.Offset > target && e.Offset != 100 {
				t.Fatalf("lookup(%d) = %+v beyond target", target, e)
			}
		}
	})
}

// FuzzTimeIndex is FuzzOffsetIndex for .timeindex files.
func FuzzTimeIndex(f *testing.F) {
	f.Add([]byte{})
	f.Add(append(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64(nil, 1700000000004), 4), make([]byte, 24)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := vfs.NewMem()
		if err := writeFile(fsys, "/x.timeindex", data); err != nil {
			t.Fatal(err)
		}
		x, err := openTimeIndex(fsys, "/x.timeindex", 100, 1024)
		if err != nil {
			t.Fatal(err)
		}
		defer x.close()
		x.lookup(0)
		x.lastEntry()
		if err := x.ensureResident(); err != nil {
			t.Fatal(err)
		}
		prev := indexEntry{Timestamp: -1 << 63, Offset: -1}
		for i := 0; i < x.entries(); i++ {
			e := x.decode(x.entry(i))
			if e.Timestamp <= prev.Timestamp || e.Offset < prev.Offset {
				t.Fatalf("entry %d %+v not above %+v", i, e, prev)
			}
			if got := x.lookup(e.Timestamp); got != e {
				t.Fatalf("lookup(%d) = %+v, want %+v", e.Timestamp, got, e)
			}
			prev = e
		}
		x.lookup(-1)
		x.lookup(1 << 62)
	})
}

// FuzzSegmentRecovery opens a log whose only segment holds arbitrary bytes
// after an unclean stop: recovery keeps a prefix of whole valid batches,
// and everything then served passes its CRC.
func FuzzSegmentRecovery(f *testing.F) {
	b1 := makeBatch(batchSpec{records: 3, valueSize: 20})
	b2 := makeBatch(batchSpec{records: 1, valueSize: 5})
	records.SetBaseOffset(b2, 3)
	f.Add([]byte{})
	f.Add(append(append([]byte(nil), b1...), b2...))
	f.Add(append(append([]byte(nil), b1...), b2[:30]...))
	f.Add(b1[:len(b1)-1])
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := vfs.NewMem()
		if err := fsys.MkdirAll("/d/t-0", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeFile(fsys, "/d/t-0/00000000000000000000.log", data); err != nil {
			t.Fatal(err)
		}
		l, err := Open(fsys, "/d/t-0", testTP, testOptions(), clock.NewManual(testStart), StartState{}, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		defer l.Close()
		var kept int64
		for _, s := range l.Segments() {
			kept += s.Size
		}
		if kept > int64(len(data)) {
			t.Fatalf("recovered %d bytes from %d", kept, len(data))
		}
		got := readAll(t, l)
		var all []byte
		for _, b := range got {
			all = append(all, b...)
		}
		if !bytes.Equal(all, data[:len(all)]) {
			t.Fatal("served bytes are not a prefix of the segment")
		}
		if _, err := l.Append(makeBatch(batchSpec{records: 1, valueSize: 1}), 0); err != nil {
			t.Fatalf("append after recovery: %v", err)
		}
	})
}

func writeFile(fsys vfs.FS, name string, data []byte) error {
	f, err := fsys.Create(name)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteAt(data, 0)
	return err
}
