package commitlog

import (
	"path/filepath"
	"testing"

	"github.com/sluice-io/sluice/internal/vfs"
)

// BenchmarkOffsetIndexAppend measures adding entries to an active segment's
// offset index on a real file system, as the append path does once per
// index.interval.bytes of log, including the write of the entries to the
// file when the index fills and is trimmed (as at a roll).
func BenchmarkOffsetIndexAppend(b *testing.B) {
	const maxBytes = 1 << 20
	x, err := openOffsetIndex(vfs.Default, filepath.Join(b.TempDir(), "0.index"), 0, maxBytes)
	if err != nil {
		b.Fatal(err)
	}
	defer x.close()
	if err := x.ensureResident(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	n := int64(0)
	for b.Loop() {
		if x.isFull() {
			if err := x.trim(); err != nil {
				b.Fatal(err)
			}
			if err := x.truncateEntries(0); err != nil {
				b.Fatal(err)
			}
			n = 0
		}
		n++
		if err := x.append(n*4, n*4096); err != nil {
			b.Fatal(err)
		}
	}
}
