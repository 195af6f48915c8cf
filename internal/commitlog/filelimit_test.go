package commitlog

import "testing"

func TestPartitionsWithinFileLimit(t *testing.T) {
	for _, c := range []struct {
		limit uint64
		want  int
	}{
		{1024, 768}, // a quarter kept
		{20000, 15000},
		{256, 192},
		{100, 36},    // 64 kept at least
		{64, 1},      // below the reserve: one partition, not none
		{1 << 62, 0}, // unlimited in practice
		{1048576, 786432},
	} {
		if got := partitionsWithin(c.limit); got != c.want {
			t.Errorf("partitionsWithin(%d) = %d, want %d", c.limit, got, c.want)
		}
	}
	if n := PartitionsWithinFileLimit(); n < 0 {
		t.Fatalf("this process's ceiling is %d", n)
	}
}
