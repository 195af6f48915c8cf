package main

import (
	"fmt"
	"math"
	"slices"
	"sync"
)

// system names one side of the comparison.
type system string

const (
	sysSluice system = "Sluice"
	sysKafka  system = "Kafka"
)

// row is one line of the comparison table: a figure measured on both systems.
type row struct {
	Key    string // stable identifier, used for ordering and the raw values
	Label  string // what the table shows
	Unit   string
	Format string // printf verb for one value, e.g. "%.1f"
	// HigherIsBetter says which way the Sluice/Kafka ratio reads; it is printed beside the
	// ratio so nobody has to guess.
	HigherIsBetter bool
}

// onNodes is the row measured on a cluster of n nodes: its own key, and a label that says
// so (n <= 1 leaves the row as it is).
func (r row) onNodes(n int) row {
	if n <= 1 {
		return r
	}
	r.Key += nodesKey(n)
	r.Label += nodesLabel(n) + "; CPU and RSS summed over the nodes"
	return r
}

// sample is one measured value with the round it came from and the load at that time.
type sample struct {
	Round int
	Value float64
	Load  string
}

// failure is a run that produced no value, kept so the report says so instead of
// silently showing fewer samples.
type failure struct {
	Round  int
	System system
	Row    string
	Reason string
}

// results collects every sample of a run. Rows appear in the order they were first
// recorded, which is the order the workloads ran.
type results struct {
	mu       sync.Mutex
	rows     []row
	values   map[string]map[system][]sample
	failures []failure
	notes    []string
}

func newResults() *results {
	return &results{values: make(map[string]map[system][]sample)}
}

func (r *results) ensureRow(rw row) {
	if _, ok := r.values[rw.Key]; ok {
		return
	}
	r.rows = append(r.rows, rw)
	r.values[rw.Key] = make(map[system][]sample)
}

func (r *results) add(rw row, sys system, round int, v float64, load string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ensureRow(rw)
	r.values[rw.Key][sys] = append(r.values[rw.Key][sys], sample{Round: round, Value: v, Load: load})
}

func (r *results) fail(rw row, sys system, round int, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ensureRow(rw)
	r.failures = append(r.failures, failure{Round: round, System: sys, Row: rw.Label, Reason: reason})
}

func (r *results) note(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// median returns the median of the row's values for a system (the mean of the two middle
// values for an even count) and whether there were any.
func (r *results) median(key string, sys system) (float64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return medianOf(valuesOf(r.values[key][sys]))
}

func valuesOf(ss []sample) []float64 {
	out := make([]float64, len(ss))
	for i, s := range ss {
		out[i] = s.Value
	}
	return out
}

func medianOf(vs []float64) (float64, bool) {
	if len(vs) == 0 {
		return 0, false
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2], true
	}
	return (s[n/2-1] + s[n/2]) / 2, true
}

// summary formats "median (min-max)" for a set of values, or "n/a".
func summary(vs []float64, format string) string {
	m, ok := medianOf(vs)
	if !ok {
		return "n/a"
	}
	out := fmt.Sprintf(format, m)
	if len(vs) > 1 {
		out += fmt.Sprintf(" ("+format+"–"+format+")", slices.Min(vs), slices.Max(vs))
	}
	return out
}

// ratio formats a/b with two decimals, or "n/a" when either side is missing or b is zero.
func ratio(a, b float64, aok, bok bool) string {
	if !aok || !bok || b == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", a/b)
}
