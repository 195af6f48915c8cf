package report

import (
	"math/bits"
	"slices"
	"sort"
	"time"

	"github.com/sluice-io/sluice/internal/verify/checker"
	"github.com/sluice-io/sluice/internal/verify/history"
)

// maxBuckets caps the points of every time series: a history longer than
// maxBuckets seconds gets buckets of several whole seconds.
const maxBuckets = 2000

// aggregates is one pass over a history: counts per time bucket, ack
// latency histograms per bucket and overall, the fault windows.
type aggregates struct {
	span  time.Duration // time of the last op
	width time.Duration // bucket width, whole seconds
	// Invariant: acks, polled, hist and maxLat all have one entry per
	// bucket; hist[i] is nil until bucket i holds an ack with a latency.
	acks, polled []int64
	hist         []*latHist
	maxLat       []time.Duration

	all                    latHist
	totalAcks, totalPolled int64

	faults []window // in start order
	// anomalyAt are the times of the anomalies' first ops, sorted (set
	// by setAnomalies, for the fault timeline).
	anomalyAt []time.Duration
}

// window is one fault: its kind, when it started and ended (End is the
// history's end when the fault never ended).
type window struct {
	Kind       string
	Start, End time.Duration
	Nodes      []int32
	Open       bool // no fault-end was recorded
}

// aggregate reads ops once (after a scan for the last time and the final
// readers' processes, whose polls are final reads, not throughput).
func aggregate(ops []history.Op) *aggregates {
	a := &aggregates{width: time.Second}
	final := map[string]bool{}
	for i := range ops {
		if ops[i].Time > a.span {
			a.span = ops[i].Time
		}
		if ops[i].Kind == history.Final {
			final[ops[i].Process] = true
		}
	}
	if n := int64(a.span/time.Second) + 1; n > maxBuckets {
		a.width = time.Duration((n+maxBuckets-1)/maxBuckets) * time.Second
	}
	n := int(a.span/a.width) + 1
	if len(ops) == 0 {
		n = 0
	}
	a.acks = make([]int64, n)
	a.polled = make([]int64, n)
	a.hist = make([]*latHist, n)
	a.maxLat = make([]time.Duration, n)
	var fw faultPairer
	for i := range ops {
		op := &ops[i]
		b := a.bucket(op.Time)
		switch op.Kind {
		case history.Ack:
			a.acks[b]++
			a.totalAcks++
			if op.Latency > 0 {
				a.addLatency(b, op.Latency)
			}
		case history.Poll:
			if !final[op.Process] {
				a.polled[b]++
				a.totalPolled++
			}
		case history.FaultStart:
			fw.start(op)
		case history.FaultEnd:
			fw.end(op)
		}
	}
	a.faults = fw.windows(a.span)
	return a
}

// setAnomalies notes when each anomaly's earliest op happened.
func (a *aggregates) setAnomalies(as []checker.Anomaly) {
	a.anomalyAt = a.anomalyAt[:0]
	for i := range as {
		if len(as[i].Ops) == 0 {
			continue
		}
		first := as[i].Ops[0].Time
		for _, op := range as[i].Ops[1:] {
			first = min(first, op.Time)
		}
		a.anomalyAt = append(a.anomalyAt, first)
	}
	slices.Sort(a.anomalyAt)
}

func (a *aggregates) bucket(t time.Duration) int {
	if t < 0 {
		return 0
	}
	b := int(t / a.width)
	if b >= len(a.acks) {
		b = len(a.acks) - 1
	}
	return b
}

func (a *aggregates) addLatency(b int, d time.Duration) {
	h := a.hist[b]
	if h == nil {
		h = &latHist{}
		a.hist[b] = h
	}
	h.add(d)
	a.all.add(d)
	if d > a.maxLat[b] {
		a.maxLat[b] = d
	}
}

// bucketSeconds is bucket i's length in seconds: the last one ends at the
// history's end, so its rate is not understated.
func (a *aggregates) bucketSeconds(i int) float64 {
	start := time.Duration(i) * a.width
	end := start + a.width
	if i == len(a.acks)-1 && a.span < end {
		end = a.span
	}
	if end-start < time.Millisecond {
		return a.width.Seconds()
	}
	return (end - start).Seconds()
}

func (a *aggregates) latency() Latency {
	return Latency{
		Count: a.all.n,
		P50:   a.all.quantile(0.50),
		P99:   a.all.quantile(0.99),
		P999:  a.all.quantile(0.999),
		Max:   a.all.max,
	}
}

// faultPairer matches each fault-end to the oldest open fault-start of the
// same kind and nodes (else of the same kind).
type faultPairer struct {
	open []window
	done []window
}

func (f *faultPairer) start(op *history.Op) {
	f.open = append(f.open, window{Kind: faultKind(op), Start: op.Time, Nodes: op.Nodes, Open: true})
}

func (f *faultPairer) end(op *history.Op) {
	kind := faultKind(op)
	at := -1
	for i, w := range f.open {
		if w.Kind != kind {
			continue
		}
		if sameNodes(w.Nodes, op.Nodes) {
			at = i
			break
		}
		if at < 0 {
			at = i
		}
	}
	if at < 0 {
		return // an end without a start: nothing to draw
	}
	w := f.open[at]
	w.End, w.Open = op.Time, false
	f.open = append(f.open[:at], f.open[at+1:]...)
	f.done = append(f.done, w)
}

func (f *faultPairer) windows(span time.Duration) []window {
	out := append(f.done, f.open...)
	for i := range out {
		if out[i].Open {
			out[i].End = span
		}
		if out[i].End < out[i].Start {
			out[i].End = out[i].Start
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

func faultKind(op *history.Op) string {
	if op.Fault == "" {
		return "unnamed"
	}
	return op.Fault
}

func sameNodes(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// latHist is a log-linear histogram of durations: exact below 64 ns, then
// 32 equal bins an octave (each within ~3% of its values), up to 2^40 ns.
type latHist struct {
	bins [histBins]uint32
	n    int64
	max  time.Duration
}

const (
	histSub  = 32      // bins per octave
	histTop  = 1 << 40 // larger durations count as histTop-1
	histBins = histSub * (40 - 6 + 2)
)

func histBin(d time.Duration) int {
	v := uint64(d)
	if v >= histTop {
		v = histTop - 1
	}
	if v < 2*histSub {
		return int(v)
	}
	e := bits.Len64(v) - 6 // v>>e is in [32, 64)
	return histSub*e + int(v>>uint(e))
}

// binValue is the middle of bin b's range.
func binValue(b int) time.Duration {
	if b < 2*histSub {
		return time.Duration(b)
	}
	e := b/histSub - 1
	lo := uint64(b%histSub+histSub) << uint(e)
	return time.Duration(lo + (uint64(1)<<uint(e))/2)
}

func (h *latHist) add(d time.Duration) {
	h.bins[histBin(d)]++
	h.n++
	if d > h.max {
		h.max = d
	}
}

// quantile is the q-quantile (0 when empty), never above the exact max.
func (h *latHist) quantile(q float64) time.Duration {
	if h == nil || h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.999999)
	if rank < 1 {
		rank = 1
	}
	if rank >= uint64(h.n) {
		return h.max
	}
	var seen uint64
	for b, c := range h.bins {
		seen += uint64(c)
		if seen >= rank {
			return min(binValue(b), h.max)
		}
	}
	return h.max
}
