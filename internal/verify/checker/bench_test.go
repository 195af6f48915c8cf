package checker

import (
	"math/rand/v2"
	"testing"

	"github.com/sluice-io/sluice/internal/verify/history"
)

// benchHistory is a right simulated history of about n ops.
func benchHistory(n int) []history.Op {
	rng := rand.New(rand.NewPCG(1, 1))
	// A step makes about 2.6 ops, and the final read adds about one per
	// value written.
	return simulate(rng, simConfig{partitions: 6, producers: 4, consumers: 3, steps: n * 10 / 24})
}

// BenchmarkCheck1M checks a right history of about a million ops (the
// soak's tens of millions scale linearly).
func BenchmarkCheck1M(b *testing.B) {
	ops := benchHistory(1_000_000)
	b.ReportAllocs()
	for b.Loop() {
		if res := check(ops, nil); !res.Valid() {
			b.Fatal(res.Anomalies[0].Explain)
		}
	}
	b.ReportMetric(float64(len(ops)), "history-ops")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(ops)), "ns/history-op")
}
