package checker

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/sluice-io/sluice/internal/verify/history"
)

// TestTxnChecks runs checkTransactions over the histories of
// testdata/txn. A "check" block is a history, one op a line (each op
// 1 ms after the one before, topic "t"):
//
//	begin <txn>                  TxnBegin of process <txn> up to "-t"
//	send <txn> <value> <part>    Send of value in txn
//	ack <value> <offset>         its Ack
//	info <value> | fail <value>  its Info / Fail
//	commit|abort|unknown <txn>   TxnCommit / TxnAbort / Info with Txn
//	assign <proc> <p,p,...>      Assign
//	poll <proc> <part> <offset> <value>
//	final <part> <hw>            Final of process "final" (its values are
//	                             "poll final ...")
//
// The output is each anomaly: kind, partition, values, offsets, the ops'
// indexes and kinds, and the explanation.
func TestTxnChecks(t *testing.T) {
	datadriven.Walk(t, "testdata/txn", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			if td.Cmd != "check" {
				t.Fatalf("unknown command %q", td.Cmd)
			}
			ops, err := parseTxnHistory(td.Input)
			if err != nil {
				t.Fatalf("%s: %v", td.Pos, err)
			}
			return formatAnomalies(checkTransactions(ops))
		})
	})
}

// TestTxnCheckRegistered: Check runs the transactional checks.
func TestTxnCheckRegistered(t *testing.T) {
	ops, err := parseTxnHistory("begin txn-0-t1\nsend txn-0-t1 a 0\nack a 5\nabort txn-0-t1\npoll c1 0 5 a")
	if err != nil {
		t.Fatal(err)
	}
	if got := Check(ops).ByKind()[AbortedRead]; got != 1 {
		t.Fatalf("Check found %d aborted reads, want 1", got)
	}
}

func formatAnomalies(as []Anomaly) string {
	if len(as) == 0 {
		return "ok\n"
	}
	var b strings.Builder
	for _, a := range as {
		fmt.Fprintf(&b, "%s %s-%d values=%v offsets=%v\n  ops:", a.Kind, a.Topic, a.Partition, a.Values, a.Offsets)
		for _, op := range a.Ops {
			fmt.Fprintf(&b, " #%d %s", op.Index, op.Kind)
		}
		fmt.Fprintf(&b, "\n  %s\n", a.Explain)
	}
	return b.String()
}

// parseTxnHistory reads the test's history language (TestTxnChecks).
func parseTxnHistory(input string) ([]history.Op, error) {
	var ops []history.Op
	sends := map[string]history.Op{}
	for line := range strings.Lines(input) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		op, err := parseTxnOp(f, sends)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", strings.TrimSpace(line), err)
		}
		op.Index = int64(len(ops))
		op.Time = time.Duration(len(ops)+1) * time.Millisecond
		if op.Kind == history.Send {
			sends[op.Value] = op
		}
		ops = append(ops, op)
	}
	return ops, nil
}

func parseTxnOp(f []string, sends map[string]history.Op) (history.Op, error) {
	want := map[string]int{"begin": 2, "send": 4, "ack": 3, "info": 2, "fail": 2, "commit": 2, "abort": 2,
		"unknown": 2, "assign": 3, "poll": 5, "final": 3}
	n, ok := want[f[0]]
	if !ok {
		return history.Op{}, fmt.Errorf("unknown op")
	}
	if len(f) != n {
		return history.Op{}, fmt.Errorf("want %d fields", n)
	}
	num := func(i int) int64 {
		v, _ := strconv.ParseInt(f[i], 10, 64)
		return v
	}
	txnOp := func(k history.Kind) history.Op {
		return history.Op{Kind: k, Process: txnProcess(f[1]), Txn: f[1], Offset: -1}
	}
	outcome := func(k history.Kind) history.Op {
		s := sends[f[1]]
		return history.Op{Kind: k, Process: s.Process, Topic: "t", Partition: s.Partition, Value: s.Value, Txn: s.Txn, Offset: -1}
	}
	switch f[0] {
	case "begin":
		return txnOp(history.TxnBegin), nil
	case "commit":
		return txnOp(history.TxnCommit), nil
	case "abort":
		return txnOp(history.TxnAbort), nil
	case "unknown":
		return txnOp(history.Info), nil
	case "send":
		return history.Op{Kind: history.Send, Process: txnProcess(f[1]), Txn: f[1], Topic: "t", Value: f[2], Partition: int32(num(3)), Offset: -1}, nil
	case "ack":
		op := outcome(history.Ack)
		op.Offset = num(2)
		return op, nil
	case "info":
		return outcome(history.Info), nil
	case "fail":
		return outcome(history.Fail), nil
	case "assign":
		var ps []int32
		for p := range strings.SplitSeq(f[2], ",") {
			v, _ := strconv.Atoi(p)
			ps = append(ps, int32(v))
		}
		return history.Op{Kind: history.Assign, Process: f[1], Topic: "t", Partitions: ps, Offset: -1}, nil
	case "poll":
		return history.Op{Kind: history.Poll, Process: f[1], Topic: "t", Partition: int32(num(2)), Offset: num(3), Value: f[4]}, nil
	default: // final
		return history.Op{Kind: history.Final, Process: "final", Topic: "t", Partition: int32(num(1)), Offset: num(2)}, nil
	}
}

func txnProcess(txn string) string {
	if i := strings.LastIndex(txn, "-t"); i > 0 {
		return txn[:i]
	}
	return txn
}
