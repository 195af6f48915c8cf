package epoch

import (
	"slices"
	"testing"

	"github.com/sluice-io/sluice/internal/vfs"
)

// FuzzParse checks the reader never panics, that what it accepts round-trips
// through Format, and that a cache opened on it is well ordered.
func FuzzParse(f *testing.F) {
	f.Add([]byte("0\n0\n"))
	f.Add([]byte("0\n2\n1 0\n3 10\n"))
	f.Add([]byte("0\n3\n1 0\n5 20\n3 10\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := Parse("fuzz", data)
		if err != nil {
			return
		}
		again, err := Parse("fuzz", Format(entries))
		if err != nil || !slices.Equal(entries, again) {
			t.Fatalf("round trip of %v = %v, %v", entries, again, err)
		}
		m := vfs.NewMem()
		if err := vfs.WriteFileAtomic(m, "/f", data); err != nil {
			t.Fatal(err)
		}
		c, err := Open(m, "/f")
		if err != nil {
			t.Fatalf("Open of parseable content: %v", err)
		}
		loaded := c.Entries()
		for i := 1; i < len(loaded); i++ {
			if loaded[i].Epoch <= loaded[i-1].Epoch || loaded[i].StartOffset <= loaded[i-1].StartOffset {
				t.Fatalf("cache not strictly increasing: %v", loaded)
			}
		}
	})
}
