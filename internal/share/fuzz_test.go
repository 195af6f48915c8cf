package share

import (
	"fmt"
	"testing"
	"time"
)

// fuzzLog is a log of record batches 0..n of sizes 1 to 4.
func fuzzLog(n int64) []FetchedBatch {
	var out []FetchedBatch
	for o, i := int64(0), int64(0); o < n; i++ {
		size := 1 + i*7%4
		out = append(out, FetchedBatch{BaseOffset: o, LastOffset: o + size - 1, ProducerID: -1})
		o += size
	}
	return out
}

// readFrom returns up to k batches of the log from the one holding o.
func readFrom(log []FetchedBatch, o int64, k int) []FetchedBatch {
	for i, b := range log {
		if b.LastOffset >= o {
			return log[i:min(len(log), i+k)]
		}
	}
	return nil
}

type fuzzer struct {
	t       *testing.T
	p       *Partition
	now     time.Time
	log     []FetchedBatch
	data    []byte
	pending []uint64
	writes  map[uint64]*Write
	// done are offsets acknowledged or archived by a completed write:
	// never delivered again.
	done     map[int64]RecordState
	lsoMoved bool
}

func (f *fuzzer) next() int {
	if len(f.data) == 0 {
		return 0
	}
	b := f.data[0]
	f.data = f.data[1:]
	return int(b)
}

func FuzzPartition(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 3, 4, 1, 5, 9, 2, 3, 0, 0, 7, 1, 1, 2})
	f.Add([]byte{0, 0, 0, 3, 0, 3, 200, 0, 4, 4, 1, 2, 0, 5, 6, 6, 6, 3, 250, 0, 1})
	f.Add([]byte{0, 10, 1, 1, 0, 0, 2, 2, 3, 255, 3, 255, 3, 255, 0, 7, 6, 5, 4, 1, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg := Config{MaxInFlightRecords: 40, DeliveryCountLimit: 3, RecordLockDuration: time.Second}
		p, err := NewPartition(cfg, 0, PersistedState{StartOffset: UninitializedStartOffset}, 0)
		if err != nil {
			t.Fatal(err)
		}
		fz := &fuzzer{t: t, p: p, now: time.UnixMilli(0), log: fuzzLog(300), data: data, done: map[int64]RecordState{}, writes: map[uint64]*Write{}}
		for steps := 0; len(fz.data) > 0 && steps < 300; steps++ {
			fz.step()
			fz.check()
		}
	})
}

func (f *fuzzer) member() string { return fmt.Sprintf("m%d", f.next()%3) }

func (f *fuzzer) step() {
	switch f.next() % 8 {
	case 0, 1:
		f.acquire()
	case 2, 3:
		f.ack()
	case 4:
		f.keep(f.p.ReleaseMember(f.member(), f.now))
	case 5:
		f.now = f.now.Add(time.Duration(f.next()*8) * time.Millisecond)
		f.keep(f.p.Expire(f.now), nil)
	case 6:
		f.complete()
	case 7:
		if f.next()%4 == 0 {
			f.lsoMoved = true
			f.p.UpdateLogStartOffset(f.p.StartOffset() + int64(f.next()%8))
		}
	}
}

func (f *fuzzer) acquire() {
	m := f.member()
	req := AcquireRequest{MemberID: m, MaxRecords: 1 + f.next()%12, BatchSize: f.next() % 6, FetchOffset: f.p.NextFetchOffset()}
	if f.next()%2 == 0 {
		req.Mode = RecordLimit
	}
	req.Batches = readFrom(f.log, req.FetchOffset, 1+f.next()%5)
	recs, n := f.p.Acquire(req, f.now)
	total := 0
	for _, r := range recs {
		total += int(r.LastOffset - r.FirstOffset + 1)
		for o := r.FirstOffset; o <= r.LastOffset; o++ {
			if st, ok := f.done[o]; ok {
				f.t.Fatalf("offset %d delivered again after %s", o, st)
			}
			if o < f.p.StartOffset() {
				f.t.Fatalf("offset %d delivered below SPSO %d", o, f.p.StartOffset())
			}
			r2 := f.state(o)
			if r2 == nil || r2.state != Acquired || r2.member != m || int16(r2.count) != r.DeliveryCount {
				f.t.Fatalf("offset %d returned as acquired by %s count %d, state %+v", o, m, r.DeliveryCount, r2)
			}
		}
	}
	if total != n {
		f.t.Fatalf("acquired count %d, records %d", n, total)
	}
	if req.Mode == RecordLimit && n > req.MaxRecords {
		f.t.Fatalf("record_limit acquired %d > %d", n, req.MaxRecords)
	}
}

// ack acknowledges a run of records some member holds, or a random range.
func (f *fuzzer) ack() {
	m := f.member()
	first, last := int64(f.next()), int64(-1)
	if f.next()%4 != 0 {
		first, last = f.heldRun(m)
	}
	if last < first {
		last = first + int64(f.next()%5)
	}
	types := []int8{int8(f.next() % 5)}
	if f.next()%3 == 0 {
		types = nil
		for o := first; o <= last; o++ {
			types = append(types, int8(f.next()%4))
		}
	}
	f.keep(f.p.Acknowledge(m, []AckBatch{{first, last, types}}, f.now))
}

// heldRun finds the first run of records m holds.
func (f *fuzzer) heldRun(m string) (int64, int64) {
	first := int64(-1)
	for _, b := range f.p.batches {
		for o := b.first; o <= b.last; o++ {
			r := b.at(o)
			held := r.state == Acquired && r.member == m && r.pend == nil
			switch {
			case held && first < 0:
				first = o
			case !held && first >= 0:
				return first, o - 1
			}
		}
	}
	if first >= 0 {
		return first, f.p.batches[len(f.p.batches)-1].last
	}
	return 0, -1
}

func (f *fuzzer) keep(w *Write, err error) {
	if err != nil || w == nil {
		return
	}
	if f.next()%2 == 0 {
		f.finish(w, true)
		return
	}
	f.pending = append(f.pending, w.ID)
	f.writes[w.ID] = w
}

func (f *fuzzer) complete() {
	if len(f.pending) == 0 {
		return
	}
	i := f.next() % len(f.pending)
	id := f.pending[i]
	f.pending = append(f.pending[:i], f.pending[i+1:]...)
	f.finish(f.writes[id], f.next()%3 != 0)
}

func (f *fuzzer) finish(w *Write, ok bool) {
	var err error
	if !ok {
		err = PersisterError(15)
	}
	rollback := f.p.writes[w.ID].rollback
	if _, derr := f.p.WriteDone(w.ID, err, f.now); derr != nil {
		f.t.Fatal(derr)
	}
	if !ok && rollback {
		return
	}
	for _, b := range w.Batches {
		if b.DeliveryState.terminal() {
			for o := b.FirstOffset; o <= b.LastOffset; o++ {
				f.done[o] = b.DeliveryState
			}
		}
	}
}

func (f *fuzzer) state(o int64) *recState {
	i := f.p.floor(o)
	if i < 0 || f.p.batches[i].last < o {
		return nil
	}
	return f.p.batches[i].at(o)
}

// check verifies the invariants of the window.
func (f *fuzzer) check() {
	p, limit := f.p, f.p.cfg.DeliveryCountLimit
	prev := int64(-1)
	for _, b := range p.batches {
		if b.first <= prev || b.last < b.first || (b.offsets != nil && int64(len(b.offsets)) != b.last-b.first+1) {
			f.t.Fatalf("batches out of order or malformed at %d-%d", b.first, b.last)
		}
		prev = b.last
		for o := b.first; o <= b.last; o++ {
			r := b.at(o)
			switch {
			case r.state == Available && o < p.start:
				f.t.Fatalf("offset %d available below SPSO %d", o, p.start)
			case r.state == Acquired && o < p.start && !f.lsoMoved:
				f.t.Fatalf("offset %d acquired below SPSO %d", o, p.start)
			case r.count > limit:
				f.t.Fatalf("offset %d delivered %d times, limit %d", o, r.count, limit)
			case r.state == Available && r.count >= limit && r.pend == nil:
				f.t.Fatalf("offset %d available at the delivery limit", o)
			case (r.state == Acquired) != (r.member != ""):
				f.t.Fatalf("offset %d %s owned by %q", o, r.state, r.member)
			case r.state != Acquired && r.pend == nil && !r.deadline.IsZero():
				f.t.Fatalf("offset %d %s has a lock deadline", o, r.state)
			case r.pend != nil && len(p.writes) == 0:
				f.t.Fatalf("offset %d in transition without a write", o)
			}
			if st, ok := f.done[o]; ok && !r.state.terminal() && o >= p.start {
				f.t.Fatalf("offset %d %s after %s was recorded", o, r.state, st)
			}
		}
	}
	if len(p.batches) > 0 && p.end < p.batches[len(p.batches)-1].last {
		f.t.Fatalf("SPEO %d below the last in-flight offset %d", p.end, prev)
	}
}
