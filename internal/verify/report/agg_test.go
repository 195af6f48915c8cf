package report

import (
	"flag"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/verify/checker"
	"github.com/sluice-io/sluice/internal/verify/history"
)

// TestHistQuantiles: the histogram's quantiles are within its bin width
// (1/32 of an octave, ~3%) of the exact ones, over latencies from
// microseconds to minutes; Max is exact.
func TestHistQuantiles(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	var h latHist
	var all []time.Duration
	for i := 0; i < 100000; i++ {
		d := time.Duration(math.Exp(rng.Float64()*math.Log(float64(5*time.Minute)/float64(time.Microsecond)))) * time.Microsecond
		h.add(d)
		all = append(all, d)
	}
	slices.Sort(all)
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		exact := all[int(math.Ceil(q*float64(len(all))))-1]
		got := h.quantile(q)
		if r := math.Abs(float64(got-exact)) / float64(exact); r > 1.0/32 {
			t.Errorf("q%v: %v, exact %v (off by %.1f%%)", q, got, exact, 100*r)
		}
	}
	if h.max != all[len(all)-1] || h.quantile(1) != h.max {
		t.Errorf("max %v, q1 %v, exact %v", h.max, h.quantile(1), all[len(all)-1])
	}
	for _, d := range []time.Duration{0, 1, 63, 64, 65, 1000, time.Millisecond, time.Hour} {
		if b := histBin(d); b < 0 || b >= histBins {
			t.Errorf("bin of %v = %d, out of [0, %d)", d, b, histBins)
		}
	}
	var empty latHist
	if empty.quantile(0.5) != 0 {
		t.Error("empty histogram's median is not 0")
	}
}

// TestFaultWindows: ends pair with the oldest open start of the same kind
// and nodes; a fault never ended lasts to the history's end; an end
// without a start draws nothing.
func TestFaultWindows(t *testing.T) {
	f := func(s float64, k history.Kind, fault string, nodes ...int32) history.Op {
		return history.Op{Time: time.Duration(s * float64(time.Second)), Kind: k, Fault: fault, Nodes: nodes}
	}
	a := aggregate([]history.Op{
		f(1, history.FaultStart, "kill", 1),
		f(2, history.FaultStart, "kill", 2),
		f(3, history.FaultEnd, "kill", 2),
		f(4, history.FaultEnd, "pause", 3), // never started
		f(5, history.FaultEnd, "kill", 1),
		f(6, history.FaultStart, "partition", 1, 2),
		f(9, history.Ack, ""),
	})
	want := []window{
		{Kind: "kill", Start: 1 * time.Second, End: 5 * time.Second, Nodes: []int32{1}},
		{Kind: "kill", Start: 2 * time.Second, End: 3 * time.Second, Nodes: []int32{2}},
		{Kind: "partition", Start: 6 * time.Second, End: 9 * time.Second, Nodes: []int32{1, 2}, Open: true},
	}
	if len(a.faults) != len(want) {
		t.Fatalf("windows %+v, want %+v", a.faults, want)
	}
	for i := range want {
		g, w := a.faults[i], want[i]
		if g.Kind != w.Kind || g.Start != w.Start || g.End != w.End || g.Open != w.Open || !sameNodes(g.Nodes, w.Nodes) {
			t.Errorf("window %d = %+v, want %+v", i, g, w)
		}
	}
}

// TestBuckets: a soak's history gets at most maxBuckets buckets of whole
// seconds, and the per-bucket counts add up to the totals; final reads
// are not throughput.
func TestBuckets(t *testing.T) {
	for _, tc := range []struct {
		span  time.Duration
		width time.Duration
	}{
		{10 * time.Second, time.Second},
		{1990 * time.Second, time.Second},
		{2 * time.Hour, 4 * time.Second},
		{3 * time.Hour, 6 * time.Second},
	} {
		h := synthHistory(30000, tc.span, faultOps(tc.span))
		a := aggregate(h)
		if a.width != tc.width || len(a.acks) > maxBuckets {
			t.Errorf("span %v: width %v, %d buckets; want width %v, at most %d", tc.span, a.width, len(a.acks), tc.width, maxBuckets)
		}
		var acks, polled int64
		for i := range a.acks {
			acks += a.acks[i]
			polled += a.polled[i]
		}
		if acks != 10000 || polled != 10000 || a.totalAcks != acks || a.totalPolled != polled || a.all.n != acks {
			t.Errorf("span %v: acks %d/%d, polled %d/%d, latencies %d", tc.span, acks, a.totalAcks, polled, a.totalPolled, a.all.n)
		}
	}
}

// TestOmitted: anomalies the checker counted but did not list (ByKind
// counts more than Anomalies holds) count in the total and are named in
// anomalies.txt.
func TestOmitted(t *testing.T) {
	h := synthHistory(30, time.Second, nil)
	res := oneOfEach(h)
	res.Anomalies = append(res.Anomalies, res.Anomalies[0], res.Anomalies[0])
	s, err := Write(t.TempDir(), Meta{}, h, res)
	if err != nil {
		t.Fatal(err)
	}
	if s.Total != len(anomalyKinds)+3 || s.Anomalies[checker.LostWrite] != 3 {
		t.Errorf("total %d, lost writes %d", s.Total, s.Anomalies[checker.LostWrite])
	}
}

// soakFaults is a soak's schedule: n faults of six kinds, each lasting
// a few seconds, spread over span.
func soakFaults(n int, span time.Duration) []history.Op {
	kinds := []string{"kill", "pause", "partition", "leader-election", "reassign", "clock-jump"}
	var ops []history.Op
	every := span / time.Duration(n+1)
	for i := 0; i < n; i++ {
		start := time.Duration(i+1) * every
		k := kinds[i%len(kinds)]
		node := []int32{int32(i%3 + 1)}
		ops = append(ops,
			history.Op{Time: start, Kind: history.FaultStart, Process: "nemesis", Fault: k, Nodes: node},
			history.Op{Time: start + every/2, Kind: history.FaultEnd, Process: "nemesis", Fault: k, Nodes: node})
	}
	return ops
}

var benchOps = flag.Int("ops", 1_000_000, "ops in BenchmarkWrite's history")

// BenchmarkWrite writes the report of a 1M-op history (-ops sets the
// size; a third of them acks) over two hours with 1,000 faults, as a
// soak's.
func BenchmarkWrite(b *testing.B) {
	span := 2 * time.Hour
	h := synthHistory(*benchOps, span, soakFaults(1000, span))
	res := checker.Result{Stats: statsOf(h)}
	dir := b.TempDir()
	// The history file exists (as the Recorder's would), so Write's cost
	// is the report's.
	if err := os.WriteFile(filepath.Join(dir, HistoryFile), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Write(dir, testMeta, h, res); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	st, err := os.Stat(filepath.Join(dir, ReportFile))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(st.Size()), "html-bytes")
	b.ReportMetric(float64(len(h)), "ops")
	if *keep != "" {
		if _, err := Write(*keep, testMeta, h, oneOfEach(h)); err != nil {
			b.Fatal(err)
		}
	}
}
