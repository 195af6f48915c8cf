package checker

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/sluice-io/sluice/internal/verify/history"
)

// The transactional workload's checks. A transaction is the TxnBegin, the
// Sends carrying its Txn and the op that ended it: TxnCommit, TxnAbort or
// an Info with Txn set and no Value (the commit's outcome is unknown).
// Every reader of the transactional topic reads committed, so:
//
//   - a value of an aborted transaction must never be read (aborted-read);
//   - a committed transaction's values are all visible or none is: the
//     final read (which reads every partition to its end) holds all of its
//     acknowledged values once it holds one, and a consumer that read one
//     of them and polled past another in the same partition without a
//     reassignment in between read that one too (torn-transaction);
//   - a transaction whose end is unknown committed or aborted as a whole,
//     so the final read holds all or none of its values, and none only if
//     no reader ever saw one (torn-transaction).
//
// A transaction's values the general checks do not judge (aborted or
// unknown transactions) are judged here; a committed transaction none of
// whose values was read is a lost write, for the general checks.

func init() { checks = append(checks, checkTransactions) }

// txnState is how a transaction ended.
type txnState int

const (
	txnOpen      txnState = iota // no end recorded: judged as unknown
	txnCommitted                 // TxnCommit
	txnAborted                   // TxnAbort
	txnUnknown                   // Info with Txn set and no Value
)

// txnValue is one value a transaction sent.
type txnValue struct {
	value     string
	topic     string
	partition int32
	// offset is where the broker acknowledged it, else where a reader
	// read it, else -1.
	offset int64
	send   history.Op
	// outcome is the send's Ack, Fail or Info; Kind is "" until one came.
	outcome history.Op
}

func (v *txnValue) acked() bool { return v.outcome.Kind == history.Ack }

// txnRecord is one transaction of the history.
type txnRecord struct {
	id         string
	state      txnState
	begin, end history.Op // Kind "" when not recorded
	values     []*txnValue
}

// txnPart is a topic partition.
type txnPart struct {
	topic     string
	partition int32
}

// txnHistory is what the transactional checks need of a history.
type txnHistory struct {
	txns    []*txnRecord          // in order of first appearance
	byID    map[string]*txnRecord // Txn → transaction
	byValue map[string]*txnValue  // value → its send
	valueTx map[string]*txnRecord // value → its transaction
	// final names the final readers' processes; covered holds each
	// partition a final reader read to its end, with its Final op.
	final   map[string]bool
	covered map[txnPart]history.Op
	// reads are the Polls of transactional values, by value, in order.
	reads map[string][]history.Op
}

// checkTransactions finds aborted reads and torn transactions.
func checkTransactions(ops []history.Op) []Anomaly {
	h := newTxnHistory(ops)
	if len(h.txns) == 0 {
		return nil
	}
	var out []Anomaly
	out = append(out, h.abortedReads()...)
	out = append(out, h.tornInFinal()...)
	out = append(out, h.tornInRuns(ops)...)
	return out
}

func newTxnHistory(ops []history.Op) *txnHistory {
	h := &txnHistory{
		byID:    map[string]*txnRecord{},
		byValue: map[string]*txnValue{},
		valueTx: map[string]*txnRecord{},
		final:   map[string]bool{},
		covered: map[txnPart]history.Op{},
		reads:   map[string][]history.Op{},
	}
	for _, op := range ops {
		if op.Kind == history.Final {
			h.final[op.Process] = true
			h.covered[txnPart{op.Topic, op.Partition}] = op
		}
	}
	for _, op := range ops {
		h.add(op)
	}
	return h
}

// add files one op of the history.
func (h *txnHistory) add(op history.Op) {
	switch op.Kind {
	case history.TxnBegin:
		h.txn(op.Txn).begin = op
	case history.Send:
		if op.Txn == "" {
			return
		}
		t := h.txn(op.Txn)
		v := &txnValue{value: op.Value, topic: op.Topic, partition: op.Partition, offset: -1, send: op}
		t.values = append(t.values, v)
		h.byValue[op.Value] = v
		h.valueTx[op.Value] = t
	case history.Ack, history.Fail, history.Info:
		h.addOutcome(op)
	case history.TxnCommit:
		h.end(op, txnCommitted)
	case history.TxnAbort:
		h.end(op, txnAborted)
	case history.Poll:
		v, ok := h.byValue[op.Value]
		if !ok {
			return
		}
		h.reads[op.Value] = append(h.reads[op.Value], op)
		if v.offset < 0 {
			v.offset = op.Offset
		}
	}
}

// addOutcome files a send's outcome, or (an Info with a Txn and no Value)
// a transaction whose end is unknown.
func (h *txnHistory) addOutcome(op history.Op) {
	if op.Kind == history.Info && op.Value == "" && op.Txn != "" {
		h.end(op, txnUnknown)
		return
	}
	v, ok := h.byValue[op.Value]
	if !ok || v.outcome.Kind != "" {
		return
	}
	v.outcome = op
	if op.Kind == history.Ack && op.Offset >= 0 {
		v.offset = op.Offset
	}
}

func (h *txnHistory) end(op history.Op, s txnState) {
	t := h.txn(op.Txn)
	// The first end stands: a later Info (a clean-up abort after an
	// unknown commit) does not make a commit unknown.
	if t.state == txnOpen {
		t.state, t.end = s, op
	}
}

func (h *txnHistory) txn(id string) *txnRecord {
	t, ok := h.byID[id]
	if !ok {
		t = &txnRecord{id: id}
		h.byID[id] = t
		h.txns = append(h.txns, t)
	}
	return t
}

// abortedReads: every read of an aborted transaction's value, one anomaly
// per transaction and partition.
func (h *txnHistory) abortedReads() []Anomaly {
	var out []Anomaly
	for _, t := range h.txns {
		if t.state != txnAborted {
			continue
		}
		byTP := map[txnPart][]history.Op{}
		var order []txnPart
		for _, v := range t.values {
			for _, r := range h.reads[v.value] {
				k := txnPart{r.Topic, r.Partition}
				if _, ok := byTP[k]; !ok {
					order = append(order, k)
				}
				byTP[k] = append(byTP[k], r)
			}
		}
		for _, k := range order {
			out = append(out, abortedRead(t, k, byTP[k]))
		}
	}
	return out
}

func abortedRead(t *txnRecord, k txnPart, reads []history.Op) Anomaly {
	a := Anomaly{Kind: AbortedRead, Topic: k.topic, Partition: k.partition}
	a.Ops = append(a.Ops, txnPresent(t.begin)...)
	var what []string
	for _, r := range reads {
		a.Values = append(a.Values, r.Value)
		a.Offsets = append(a.Offsets, r.Offset)
		a.Ops = append(a.Ops, r)
		what = append(what, fmt.Sprintf("%s read %s at offset %d (%v)", r.Process, r.Value, r.Offset, r.Time))
	}
	a.Ops = txnSortOps(append(a.Ops, txnPresent(t.end)...))
	a.Explain = fmt.Sprintf("transaction %s aborted at %v, yet a read-committed reader saw its values in %s-%d: %s",
		t.id, t.end.Time, k.topic, k.partition, strings.Join(what, "; "))
	return a
}

// txnPresent is op as a one-element list, or nothing when it was not
// recorded.
func txnPresent(op history.Op) []history.Op {
	if op.Kind == "" {
		return nil
	}
	return []history.Op{op}
}

// txnSortOps puts an anomaly's ops in history order, once each.
func txnSortOps(ops []history.Op) []history.Op {
	slices.SortFunc(ops, func(a, b history.Op) int { return cmp.Compare(a.Index, b.Index) })
	return slices.CompactFunc(ops, func(a, b history.Op) bool { return a.Index == b.Index })
}

// finalSeen reports whether a final reader read value.
func (h *txnHistory) finalSeen(value string) (history.Op, bool) {
	for _, r := range h.reads[value] {
		if h.final[r.Process] {
			return r, true
		}
	}
	return history.Op{}, false
}

// anyRead reports whether any reader (consumer or final) read a value of t.
func (h *txnHistory) anyRead(t *txnRecord) bool {
	return slices.ContainsFunc(t.values, func(v *txnValue) bool { return len(h.reads[v.value]) > 0 })
}

// stateName names a transaction's end for the explanations.
func (t *txnRecord) stateName() string {
	switch t.state {
	case txnCommitted:
		return "committed"
	case txnAborted:
		return "aborted"
	case txnUnknown:
		return "ended with an unknown outcome"
	default:
		return "never ended"
	}
}
