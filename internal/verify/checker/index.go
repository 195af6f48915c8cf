package checker

import "github.com/sluice-io/sluice/internal/verify/history"

// partKey names a partition.
type partKey struct {
	topic     string
	partition int32
}

// loc is one place the history puts a value: partition id, offset, and
// the op (its position in ops) that put it there.
type loc struct {
	off  int64
	part int32
	op   int32
}

// valInfo is what the history says of one value. Op fields are
// positions in ops, -1 when there is none.
type valInfo struct {
	// first is the first place an ack or read put the value (part -1
	// when none); further distinct places are in index.extraLocs.
	first loc
	send  int32 // its first Send
	ack   int32 // its Ack with an offset
	read  int32 // its first read by a consumer
	final int32 // its first read by a final reader
	// judged: not a value of an aborted or undecided transaction (those
	// are the transactional checks' business).
	judged bool
}

// index is the history indexed once: values by name, partitions by
// (topic, partition), each partition's offsets.
type index struct {
	ops    []history.Op
	finals map[string]bool // processes that did final reads

	valueIDs map[string]int32
	vals     []valInfo
	// sendOrder lists the values in the order of their first Send.
	sendOrder []int32
	// extraLocs holds a value's places beyond its first (duplicates).
	extraLocs map[int32][]loc
	// dupOrder lists the values with extra places, in order found.
	dupOrder []int32

	partIDs map[partKey]int32
	parts   []*plog
	// clash holds, per (partition, offset) read or acked with more than
	// one value, the values beyond the first; clashOrder in order found.
	clash      map[offKey][]int32
	clashOrder []offKey

	// last caches the previous partition looked up (runs of ops touch
	// the same partition).
	lastKey partKey
	lastID  int32
}

// offKey names one offset of a partition.
type offKey struct {
	part int32
	off  int64
}

// buildIndex reads ops twice: once for what decides how values are
// judged (committed transactions, final readers), then to index them.
func buildIndex(ops []history.Op) *index {
	x := &index{
		ops:       ops,
		finals:    finalProcesses(ops),
		valueIDs:  make(map[string]int32, len(ops)/4),
		vals:      make([]valInfo, 0, len(ops)/4),
		extraLocs: map[int32][]loc{},
		partIDs:   map[partKey]int32{},
		clash:     map[offKey][]int32{},
		lastID:    -1,
	}
	undecided := undecidedTxnValues(ops)
	for i := range ops {
		op := &ops[i]
		switch op.Kind {
		case history.Send:
			v := x.value(op.Value, undecided)
			if x.vals[v].send < 0 {
				x.vals[v].send = int32(i)
				x.sendOrder = append(x.sendOrder, v)
			}
		case history.Ack:
			v := x.value(op.Value, undecided)
			if op.Offset >= 0 && x.vals[v].ack < 0 {
				x.vals[v].ack = int32(i)
			}
			x.place(v, i)
		case history.Poll:
			x.addRead(i, undecided)
		case history.Final:
			p := x.parts[x.part(op.Topic, op.Partition)]
			if op.Offset > p.finalHW {
				p.finalHW, p.finalOp = op.Offset, int32(i)
			}
		}
	}
	for _, p := range x.parts {
		p.finish()
	}
	return x
}

// addRead indexes the Poll op at i.
func (x *index) addRead(i int, undecided map[string]bool) {
	op := &x.ops[i]
	v := x.value(op.Value, undecided)
	vi := &x.vals[v]
	if x.finals[op.Process] {
		if vi.final < 0 {
			vi.final = int32(i)
		}
	} else if vi.read < 0 {
		vi.read = int32(i)
	}
	p := x.parts[x.part(op.Topic, op.Partition)]
	switch {
	case x.finals[op.Process]:
		p.finalMaxRead = max(p.finalMaxRead, op.Offset)
	case op.Offset > p.maxRead:
		p.maxRead, p.maxReadOp = op.Offset, int32(i)
	}
	x.place(v, i)
	if op.Offset >= 0 && vi.judged {
		p.markSeen(op.Offset)
	}
}

// value returns the id of a value, adding it when new.
func (x *index) value(s string, undecided map[string]bool) int32 {
	if id, ok := x.valueIDs[s]; ok {
		return id
	}
	id := int32(len(x.vals))
	x.valueIDs[s] = id
	x.vals = append(x.vals, valInfo{first: loc{part: -1}, send: -1, ack: -1, read: -1, final: -1, judged: !undecided[s]})
	return id
}

// part returns the id of a partition, adding it when new.
func (x *index) part(topic string, partition int32) int32 {
	k := partKey{topic, partition}
	if x.lastID >= 0 && k == x.lastKey {
		return x.lastID
	}
	id, ok := x.partIDs[k]
	if !ok {
		id = int32(len(x.parts))
		x.partIDs[k] = id
		x.parts = append(x.parts, newPlog(topic, partition))
	}
	x.lastKey, x.lastID = k, id
	return id
}

// place records that the ack or read at op i puts value v at its
// offset, noting a second place (duplicate) or a second value at the
// offset (inconsistent offsets). Values not judged are left out.
func (x *index) place(v int32, i int) {
	op := &x.ops[i]
	vi := &x.vals[v]
	if op.Offset < 0 || !vi.judged {
		return
	}
	l := loc{off: op.Offset, part: x.part(op.Topic, op.Partition), op: int32(i)}
	switch {
	case vi.first.part < 0:
		vi.first = l
	case vi.first.part != l.part || vi.first.off != l.off:
		x.addExtraLoc(v, l)
	}
	if old := x.parts[l.part].set(l.off, v); old != noValue && old != v {
		k := offKey{l.part, l.off}
		others := x.clash[k]
		if others == nil {
			x.clashOrder = append(x.clashOrder, k)
		}
		for _, o := range others {
			if o == v {
				return
			}
		}
		x.clash[k] = append(others, v)
	}
}

func (x *index) addExtraLoc(v int32, l loc) {
	ls, had := x.extraLocs[v]
	for _, e := range ls {
		if e.part == l.part && e.off == l.off {
			return
		}
	}
	if !had {
		x.dupOrder = append(x.dupOrder, v)
	}
	x.extraLocs[v] = append(ls, l)
}

// undecidedTxnValues are the values sent or acknowledged in a transaction
// with no TxnCommit op: aborted, or of unknown outcome.
func undecidedTxnValues(ops []history.Op) map[string]bool {
	committed := map[string]bool{}
	for i := range ops {
		if ops[i].Kind == history.TxnCommit {
			committed[ops[i].Txn] = true
		}
	}
	out := map[string]bool{}
	for i := range ops {
		op := &ops[i]
		if op.Txn != "" && op.Value != "" && !committed[op.Txn] && (op.Kind == history.Send || op.Kind == history.Ack) {
			out[op.Value] = true
		}
	}
	return out
}
