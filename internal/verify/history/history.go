// Package history is the record `sluice verify` keeps of a run: every
// operation a workload's clients invoked and what they were told, every
// value a consumer polled, every fault the nemesis injected, in the order
// they happened. The workloads write it, the checker reads it, the report
// draws it. One line of JSON per operation (history.jsonl in the results
// directory), so a run can be checked again or read by a person.
//
// The shape follows Jepsen's Kafka workload: a producer's send is an
// invocation that ends in an ack (the broker said where the value is), a
// fail (definitely not written) or an info (unknown: a timeout, a broken
// connection); a consumer's poll lists the values it read with their
// offsets.
package history

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// Kind names an operation.
type Kind string

// The operations of a history.
const (
	// Send: a producer invoked a send of Value to Topic/Partition.
	Send Kind = "send"
	// Ack: the broker acknowledged the send of Value at Offset.
	Ack Kind = "ack"
	// Fail: the send definitely did not happen (a non-retriable error
	// before anything was written, or the transaction holding it aborted).
	Fail Kind = "fail"
	// Info: the send's outcome is unknown (timeout, connection lost).
	Info Kind = "info"
	// Poll: a consumer read Value at Topic/Partition/Offset. One op per
	// record; records of one poll share Batch.
	Poll Kind = "poll"
	// Assign: a consumer's assignment became Partitions (of Topic);
	// Generation is the group's generation or member epoch when known.
	Assign Kind = "assign"
	// Commit: a consumer's offset commit of Offset for Topic/Partition in
	// Group was acknowledged.
	Commit Kind = "commit"
	// TxnBegin, TxnCommit, TxnAbort: a transactional producer's
	// transaction Txn began, committed (acknowledged) or aborted. A commit
	// whose outcome is unknown is recorded as Info with Txn set.
	TxnBegin  Kind = "txn-begin"
	TxnCommit Kind = "txn-commit"
	TxnAbort  Kind = "txn-abort"
	// FaultStart and FaultEnd bracket a fault the nemesis injected: Fault
	// names its kind, Nodes the nodes it touched, Detail the rest.
	FaultStart Kind = "fault-start"
	FaultEnd   Kind = "fault-end"
	// Final: a final reader's read of Topic/Partition from the log start
	// to the high watermark after the workload stopped (Offset is the high
	// watermark it read up to). Its values come as Poll ops with the same
	// Process.
	Final Kind = "final"
)

// Op is one operation. Fields a Kind does not use stay zero; Offset is -1
// when unknown.
type Op struct {
	// Index is the op's position in the history (0, 1, ...), set by the
	// Recorder.
	Index int64 `json:"index"`
	// Time is when it happened, as nanoseconds since the run started, set
	// by the Recorder.
	Time time.Duration `json:"time"`
	Kind Kind          `json:"kind"`
	// Process names the client: "producer-3", "consumer-1", "txn-2",
	// "final", "nemesis".
	Process   string `json:"process"`
	Topic     string `json:"topic,omitempty"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	// Value is a value unique in the run: the workloads write
	// "<process>-<n>".
	Value string `json:"value,omitempty"`
	// Latency is an ack's or commit's time since its invocation.
	Latency time.Duration `json:"latency,omitempty"`
	// Batch groups the records of one poll.
	Batch      int64   `json:"batch,omitempty"`
	Txn        string  `json:"txn,omitempty"`
	Group      string  `json:"group,omitempty"`
	Generation int32   `json:"generation,omitempty"`
	Partitions []int32 `json:"partitions,omitempty"`
	Fault      string  `json:"fault,omitempty"`
	Nodes      []int32 `json:"nodes,omitempty"`
	Err        string  `json:"err,omitempty"`
	Detail     string  `json:"detail,omitempty"`
}

func (o Op) String() string {
	b, _ := json.Marshal(o)
	return string(b)
}

// Recorder appends ops from many goroutines, numbering and timing them,
// and writes each as a JSON line when given a writer.
type Recorder struct {
	now   func() time.Time
	start time.Time

	mu  sync.Mutex
	ops []Op
	w   *bufio.Writer
	err error
}

// NewRecorder starts a history at now(); w (may be nil) receives it as
// JSON lines.
func NewRecorder(now func() time.Time, w io.Writer) *Recorder {
	r := &Recorder{now: now, start: now()}
	if w != nil {
		r.w = bufio.NewWriter(w)
	}
	return r
}

// Start is the time the run started; an Op's Time is measured from it.
func (r *Recorder) Start() time.Time { return r.start }

// Record appends op, setting its Index and Time (Time only when zero, so
// a caller can record an op it timed itself), and returns it.
func (r *Recorder) Record(op Op) Op {
	t := r.now().Sub(r.start)
	r.mu.Lock()
	defer r.mu.Unlock()
	op.Index = int64(len(r.ops))
	if op.Time == 0 {
		op.Time = t
	}
	r.ops = append(r.ops, op)
	if r.w != nil && r.err == nil {
		b, err := json.Marshal(op)
		if err == nil {
			b = append(b, '\n')
			_, err = r.w.Write(b)
		}
		r.err = err
	}
	return op
}

// Ops returns a copy of the history so far.
func (r *Recorder) Ops() []Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Op(nil), r.ops...)
}

// Flush writes what is buffered and returns the first write error.
func (r *Recorder) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w != nil && r.err == nil {
		r.err = r.w.Flush()
	}
	if r.err != nil {
		return fmt.Errorf("writing history: %w", r.err)
	}
	return nil
}

// Read parses a history written by a Recorder.
func Read(rd io.Reader) ([]Op, error) {
	var ops []Op
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var op Op
		if err := json.Unmarshal(sc.Bytes(), &op); err != nil {
			return nil, fmt.Errorf("history line %d: %w", line, err)
		}
		ops = append(ops, op)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading history: %w", err)
	}
	return ops, nil
}
