package sharefetch

import (
	"bytes"
	"testing"

	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/share"
	"github.com/sluice-io/sluice/internal/vfs"
)

// logRead lays batches of perBatch 1 KiB records (sizes[i] batches in
// file i) into memory files and returns the read over all of them and its
// bytes.
func logRead(t *testing.T, perBatch int, files ...int) (commitlog.ReadResult, []byte) {
	t.Helper()
	fs := vfs.NewMem()
	value := bytes.Repeat([]byte("v"), 1024)
	var rr commitlog.ReadResult
	var all []byte
	offset := int64(0)
	for i, batches := range files {
		var data []byte
		for range batches {
			o := records.NonIdempotent(0)
			o.BaseOffset = offset
			b := records.NewBuilder(o)
			for range perBatch {
				b.Add(1, nil, value, nil)
			}
			batch, err := b.Build()
			if err != nil {
				t.Fatal(err)
			}
			data = append(data, batch...)
			offset += int64(perBatch)
		}
		f, err := fs.Create("seg" + string(rune('0'+i)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(data, 0); err != nil {
			t.Fatal(err)
		}
		rr.Slices = append(rr.Slices, commitlog.FileSlice{File: f, Pos: 0, Size: int64(len(data))})
		rr.Size += int64(len(data))
		all = append(all, data...)
	}
	return rr, all
}

// wholeRecords checks got is a prefix of all made of whole batches and
// returns the offsets they hold at or past offset.
func wholeRecords(t *testing.T, got, all []byte, offset int64) int64 {
	t.Helper()
	if !bytes.Equal(got, all[:len(got)]) {
		t.Fatalf("the %d bytes copied are not the read's first bytes", len(got))
	}
	var n int64
	rest, err := records.Batches(got, func(h records.Header, _ []byte) error {
		n += max(0, h.LastOffset()-max(h.BaseOffset, offset)+1)
		return nil
	})
	if err != nil || rest != len(got) {
		t.Fatalf("copied bytes end inside a batch (whole %d of %d, %v)", rest, len(got), err)
	}
	return n
}

func TestReadForAcquireCopiesOnlyWhatMaxRecordsNeeds(t *testing.T) {
	// 60 batches of 100 records of 1 KiB (~6 MiB) over two segment files.
	rr, all := logRead(t, 100, 30, 30)
	for _, c := range []struct {
		name       string
		offset     int64
		maxRecords int
		wantAll    bool
	}{
		{"max.poll.records default", 0, 500, false},
		{"from inside a batch", 450, 500, false},
		{"more than the first chunk holds, across both files", 0, 3500, false},
		{"more than the read holds", 0, 100000, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := readForAcquire(rr, c.offset, c.maxRecords)
			if err != nil {
				t.Fatal(err)
			}
			held := wholeRecords(t, got, all, c.offset)
			if c.wantAll {
				if len(got) != len(all) {
					t.Fatalf("copied %d bytes, want the whole read's %d", len(got), len(all))
				}
				return
			}
			if held < int64(c.maxRecords) {
				t.Fatalf("copied batches hold %d records from %d, want at least %d", held, c.offset, c.maxRecords)
			}
			// At most one growth step's worth more than needed: the copy is
			// bounded by what the records need, not by the read.
			if limit := 4 * int64(c.maxRecords+200) * 1100; int64(len(got)) > limit {
				t.Fatalf("copied %d bytes for %d records (limit %d)", len(got), c.maxRecords, limit)
			}
			if len(got) >= len(all) {
				t.Fatalf("copied the whole read (%d bytes) for %d records", len(got), c.maxRecords)
			}
		})
	}
}

func TestReadForAcquireFirstBatchWhole(t *testing.T) {
	// One batch of 3000 records (~3 MiB) is larger than the first chunk:
	// it is returned whole, as a log read returns its first batch.
	rr, all := logRead(t, 3000, 1, 1)
	got, err := readForAcquire(rr, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if held := wholeRecords(t, got, all, 0); held != 3000 {
		t.Fatalf("copied %d records, want the first batch's 3000", held)
	}
}

// keepAcquired answers with the batches holding acquired offsets, a run of
// the read without a copy when they are one.
func TestKeepAcquired(t *testing.T) {
	_, all := logRead(t, 5, 3) // offsets 0-4, 5-9, 10-14 in three batches
	third := len(all) / 3
	got := keepAcquired(all, []share.AcquiredRecords{{FirstOffset: 2, LastOffset: 6}})
	if !bytes.Equal(got, all[:2*third]) || &got[0] != &all[0] {
		t.Fatalf("offsets 2-6: got %d bytes (shared %v), want the first two batches uncopied", len(got), &got[0] == &all[0])
	}
	got = keepAcquired(all, []share.AcquiredRecords{{FirstOffset: 0, LastOffset: 0}, {FirstOffset: 12, LastOffset: 12}})
	if want := append(append([]byte(nil), all[:third]...), all[2*third:]...); !bytes.Equal(got, want) {
		t.Fatalf("offsets 0 and 12: got %d bytes, want batches one and three", len(got))
	}
	if got = keepAcquired(all, nil); len(got) != 0 {
		t.Fatalf("nothing acquired: got %d bytes", len(got))
	}
}
