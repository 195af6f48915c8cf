package main

import (
	"fmt"
	"sort"
	"sync"
)

// ackedRecord is a record the broker acknowledged: where it said it put it, and in which
// phase of the test (0 before the first kill, 1 between the kills, 2 after the second).
type ackedRecord struct {
	seq    int64
	offset int64
	phase  int
}

// readRecord is a record read back after the test.
type readRecord struct {
	seq    int64
	offset int64
}

// ledger records what the producer was told about each record it sent. Promises run on
// kgo's goroutines, so it is locked.
type ledger struct {
	mu struct {
		sync.Mutex
		phase  int
		sent   int64
		acked  map[int32][]ackedRecord
		failed map[int64]error
	}
}

func newLedger() *ledger {
	l := &ledger{}
	l.mu.acked = make(map[int32][]ackedRecord)
	l.mu.failed = make(map[int64]error)
	return l
}

func (l *ledger) setPhase(phase int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.phase = phase
}

func (l *ledger) noteSent() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.sent++
}

func (l *ledger) ack(partition int32, seq, offset int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.acked[partition] = append(l.mu.acked[partition], ackedRecord{seq: seq, offset: offset, phase: l.mu.phase})
}

func (l *ledger) fail(seq int64, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.failed[seq] = err
}

// ledgerSnapshot is a copy of a ledger, safe to read without locks.
type ledgerSnapshot struct {
	sent   int64
	acked  map[int32][]ackedRecord
	failed map[int64]error
}

func (l *ledger) snapshot() ledgerSnapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := ledgerSnapshot{sent: l.mu.sent, acked: make(map[int32][]ackedRecord), failed: make(map[int64]error)}
	for p, recs := range l.mu.acked {
		s.acked[p] = append([]ackedRecord(nil), recs...)
	}
	for seq, err := range l.mu.failed {
		s.failed[seq] = err
	}
	return s
}

func (s ledgerSnapshot) ackedCount() int {
	n := 0
	for _, recs := range s.acked {
		n += len(recs)
	}
	return n
}

func (s ledgerSnapshot) acksPerPhase(phases int) []int {
	counts := make([]int, phases)
	for _, recs := range s.acked {
		for _, r := range recs {
			if r.phase >= 0 && r.phase < phases {
				counts[r.phase]++
			}
		}
	}
	return counts
}

// verify compares what was acknowledged with what was read back and returns every
// violation of the kill test's promise: each acknowledged record is in its partition at
// the offset it was acknowledged with, exactly once, and per partition the records are in
// the order they were sent (sequence numbers strictly increase with the offset). Records
// that were never acknowledged (failed or unresolved) may be present, but never twice.
func verify(s ledgerSnapshot, read map[int32][]readRecord) []string {
	var problems []string
	seen := make(map[int64]string)
	for _, p := range sortedPartitions(read) {
		recs := read[p]
		for i, r := range recs {
			where := fmt.Sprintf("partition %d offset %d", p, r.offset)
			if prev, dup := seen[r.seq]; dup {
				problems = append(problems, fmt.Sprintf("record %d read twice: at %s and at %s", r.seq, prev, where))
			}
			seen[r.seq] = where
			if i > 0 {
				before := recs[i-1]
				if r.offset <= before.offset {
					problems = append(problems, fmt.Sprintf("%s read after offset %d", where, before.offset))
				}
				if r.seq <= before.seq {
					problems = append(problems, fmt.Sprintf("out of order: record %d at %s after record %d at offset %d",
						r.seq, where, before.seq, before.offset))
				}
			}
		}
	}
	for _, p := range sortedAckedPartitions(s.acked) {
		byOffset := make(map[int64]int64, len(read[p]))
		for _, r := range read[p] {
			byOffset[r.offset] = r.seq
		}
		for _, a := range s.acked[p] {
			got, ok := byOffset[a.offset]
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("acknowledged record %d (partition %d offset %d, phase %d) lost",
					a.seq, p, a.offset, a.phase))
			case got != a.seq:
				problems = append(problems, fmt.Sprintf("acknowledged record %d at partition %d offset %d (phase %d) reads back as record %d",
					a.seq, p, a.offset, a.phase, got))
			}
		}
	}
	return problems
}

func sortedPartitions(m map[int32][]readRecord) []int32 {
	ps := make([]int32, 0, len(m))
	for p := range m {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps
}

func sortedAckedPartitions(m map[int32][]ackedRecord) []int32 {
	ps := make([]int32, 0, len(m))
	for p := range m {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps
}
