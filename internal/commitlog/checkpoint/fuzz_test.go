package checkpoint

import (
	"maps"
	"testing"
)

// FuzzParse checks the reader never panics on arbitrary bytes, and that
// whatever it accepts survives a write and a re-read unchanged.
func FuzzParse(f *testing.F) {
	f.Add([]byte("0\n0\n"))
	f.Add([]byte("0\n2\norders 0 7\norders 1 42\n"))
	f.Add([]byte("0\n1\nt 0 -1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		offsets, err := Parse("fuzz", data)
		if err != nil {
			return
		}
		again, err := Parse("fuzz", Format(offsets))
		if err != nil {
			t.Fatalf("re-parse of formatted %v: %v", offsets, err)
		}
		if !maps.Equal(offsets, again) {
			t.Fatalf("round trip changed %v to %v", offsets, again)
		}
	})
}
