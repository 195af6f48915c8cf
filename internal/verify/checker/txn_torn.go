package checker

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sluice-io/sluice/internal/verify/history"
)

// tornInFinal: a transaction that is visible (committed, or of unknown end
// but read by someone) whose acknowledged values the final read holds only
// in part. A committed transaction the final read holds none of is left to
// the lost-write check.
func (h *txnHistory) tornInFinal() []Anomaly {
	var out []Anomaly
	for _, t := range h.txns {
		if t.state == txnAborted {
			continue
		}
		var seen []history.Op
		var missing []*txnValue
		for _, v := range t.values {
			if r, ok := h.finalSeen(v.value); ok {
				seen = append(seen, r)
			} else if _, covered := h.covered[txnPart{v.topic, v.partition}]; covered && v.acked() {
				missing = append(missing, v)
			}
		}
		visible := len(seen) > 0 || (t.state != txnCommitted && h.anyRead(t))
		if visible && len(missing) > 0 {
			out = append(out, h.tornFinal(t, seen, missing))
		}
	}
	return out
}

func (h *txnHistory) tornFinal(t *txnRecord, seen []history.Op, missing []*txnValue) Anomaly {
	a := Anomaly{Kind: TornTransaction, Topic: missing[0].topic, Partition: missing[0].partition}
	for _, v := range t.values {
		a.Values = append(a.Values, v.value)
		a.Offsets = append(a.Offsets, v.offset)
	}
	a.Ops = append(a.Ops, txnPresent(t.begin)...)
	a.Ops = append(a.Ops, seen...)
	var held, lacks []string
	for _, r := range seen {
		held = append(held, fmt.Sprintf("%s (%s-%d@%d)", r.Value, r.Topic, r.Partition, r.Offset))
	}
	for _, v := range missing {
		a.Ops = append(a.Ops, v.outcome)
		lacks = append(lacks, fmt.Sprintf("%s (%s-%d, acknowledged at %d)", v.value, v.topic, v.partition, v.offset))
	}
	a.Ops = append(a.Ops, txnPresent(t.end)...)
	a.Ops = txnSortOps(append(a.Ops, h.finalOps(missing)...))
	if len(seen) > 0 {
		a.Explain = fmt.Sprintf("transaction %s %s; the final read holds %s but not %s, though it read those partitions to their end",
			t.id, t.stateName(), strings.Join(held, ", "), strings.Join(lacks, ", "))
		return a
	}
	// Only a transaction of unknown end gets here: a consumer's read shows
	// it committed.
	first, read := h.firstRead(t)
	a.Ops = txnSortOps(append(a.Ops, read))
	a.Explain = fmt.Sprintf("transaction %s %s; a read-committed consumer read %s, so it committed, yet the final read, which read those partitions to their end, holds none of it: not %s",
		t.id, t.stateName(), first, strings.Join(lacks, ", "))
	return a
}

// finalOps are the Final ops of the partitions of missing, once each.
func (h *txnHistory) finalOps(missing []*txnValue) []history.Op {
	var out []history.Op
	done := map[txnPart]bool{}
	for _, v := range missing {
		k := txnPart{v.topic, v.partition}
		if !done[k] {
			done[k] = true
			out = append(out, h.covered[k])
		}
	}
	return out
}

// firstRead describes the first read of one of t's values, and returns
// it.
func (h *txnHistory) firstRead(t *txnRecord) (string, history.Op) {
	for _, v := range t.values {
		if rs := h.reads[v.value]; len(rs) > 0 {
			r := rs[0]
			return fmt.Sprintf("%s at %s-%d@%d (%s, %v)", v.value, r.Topic, r.Partition, r.Offset, r.Process, r.Time), r
		}
	}
	return "one of its values", history.Op{}
}

// txnRun is a consumer's reading of one partition between two of its
// assignments: within it, the consumer reads the partition forward, so
// offsets between its first and last poll are ones it read past.
type txnRun struct {
	process   string
	topic     string
	partition int32
	first     int64
	last      int64
	polls     []history.Op
	// seen are the polls of transactional values, by value.
	seen map[string]history.Op
}

type txnRunKey struct {
	process string
	epoch   int // the process's count of Assign ops so far
	txnPart
}

// runs splits the consumers' (not the final readers') polls into runs, in
// the order they began.
func (h *txnHistory) runs(ops []history.Op) []*txnRun {
	epochs := map[string]int{}
	byKey := map[txnRunKey]*txnRun{}
	var out []*txnRun
	for _, op := range ops {
		switch {
		case op.Kind == history.Assign:
			epochs[op.Process]++
		case op.Kind == history.Poll && !h.final[op.Process]:
			k := txnRunKey{op.Process, epochs[op.Process], txnPart{op.Topic, op.Partition}}
			r, ok := byKey[k]
			if !ok {
				r = &txnRun{process: op.Process, topic: op.Topic, partition: op.Partition,
					first: op.Offset, last: op.Offset, seen: map[string]history.Op{}}
				byKey[k] = r
				out = append(out, r)
			}
			r.first, r.last = min(r.first, op.Offset), max(r.last, op.Offset)
			r.polls = append(r.polls, op)
			if _, ok := h.byValue[op.Value]; ok {
				r.seen[op.Value] = op
			}
		}
	}
	return out
}

// tornInRuns: a consumer that read a value of a transaction that was not
// aborted and, in the same run, polled past another of its acknowledged
// values in that partition without reading it.
func (h *txnHistory) tornInRuns(ops []history.Op) []Anomaly {
	var out []Anomaly
	for _, r := range h.runs(ops) {
		var txns []*txnRecord
		for _, p := range r.polls {
			if t, ok := h.valueTx[p.Value]; ok && t.state != txnAborted && !slices.Contains(txns, t) {
				txns = append(txns, t)
			}
		}
		for _, t := range txns {
			if missing := r.skipped(t); len(missing) > 0 {
				out = append(out, tornRun(t, r, missing))
			}
		}
	}
	return out
}

// skipped are t's acknowledged values in r's partition that r read past
// without reading.
func (r *txnRun) skipped(t *txnRecord) []*txnValue {
	var out []*txnValue
	for _, v := range t.values {
		if v.topic != r.topic || v.partition != r.partition || !v.acked() || v.offset < 0 {
			continue
		}
		if _, ok := r.seen[v.value]; !ok && v.offset >= r.first && v.offset < r.last {
			out = append(out, v)
		}
	}
	return out
}

func tornRun(t *txnRecord, r *txnRun, missing []*txnValue) Anomaly {
	a := Anomaly{Kind: TornTransaction, Topic: r.topic, Partition: r.partition}
	a.Ops = append(a.Ops, txnPresent(t.begin)...)
	var read, lacks []string
	for _, v := range t.values {
		if p, ok := r.seen[v.value]; ok {
			a.Values = append(a.Values, v.value)
			a.Offsets = append(a.Offsets, p.Offset)
			a.Ops = append(a.Ops, p)
			read = append(read, fmt.Sprintf("%s@%d (%v)", v.value, p.Offset, p.Time))
		}
	}
	var past history.Op
	for _, v := range missing {
		a.Values = append(a.Values, v.value)
		a.Offsets = append(a.Offsets, v.offset)
		a.Ops = append(a.Ops, v.outcome)
		lacks = append(lacks, fmt.Sprintf("%s (acknowledged at %d)", v.value, v.offset))
		if past.Kind == "" {
			past = r.pollPast(v.offset)
		}
	}
	a.Ops = append(a.Ops, txnPresent(t.end)...)
	a.Ops = txnSortOps(append(a.Ops, past))
	a.Explain = fmt.Sprintf("transaction %s %s; %s read %s in %s-%d and polled on to offset %d (first past at %v) without reading %s",
		t.id, t.stateName(), r.process, strings.Join(read, ", "), r.topic, r.partition, r.last, past.Time, strings.Join(lacks, ", "))
	return a
}

// pollPast is r's first poll beyond offset.
func (r *txnRun) pollPast(offset int64) history.Op {
	for _, p := range r.polls {
		if p.Offset > offset {
			return p
		}
	}
	return r.polls[len(r.polls)-1]
}
