package checker

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/sluice-io/sluice/internal/verify/history"
)

// TestCheckDataDriven runs Check over the histories of testdata/check. A
// "check" block is a history, one line an op or a few (topic "t", each op
// 100 ms after the one before):
//
//	send <proc> <value> <part> [txn]       Send (in transaction txn)
//	ack <value> <part> <offset> [txn]      Ack (process from the value)
//	sendack <proc> <value> <part> <offset> Send then Ack
//	fail <value> | info <value>            Fail / Info of a send
//	assign <proc> <part,part,...>          Assign
//	read <proc> <part> <off>:<value>...    one Batch of Polls
//	final <part> <hw> <off>:<value>...     Final of process "final", then
//	                                       its Polls
//	commit <proc> <group> <part> <offset>  Commit
//	txn-commit|txn-abort|txn-info <txn>    TxnCommit / TxnAbort / Info
//	fault <kind>                           FaultStart and FaultEnd
//
// The output lists each anomaly (kind, partition, offsets, values, the
// ops shown by index and kind, the explanation), then "unseen N" when N
// is not 0, or "ok" when there is nothing to say. "check stats" prints
// the stats too.
func TestCheckDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata/check", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			if td.Cmd != "check" {
				t.Fatalf("%s: unknown command %q", td.Pos, td.Cmd)
			}
			ops, err := parseHist(td.Input)
			if err != nil {
				t.Fatalf("%s: %v", td.Pos, err)
			}
			// The registered (transactional) checks have their own
			// goldens in testdata/txn.
			res := check(ops, nil)
			out := formatResult(res)
			if td.HasArg("stats") {
				out += formatStats(res.Stats)
			}
			return out
		})
	})
}

// histBuilder turns the lines of a test history into ops.
type histBuilder struct {
	ops   []history.Op
	batch int64
}

func (b *histBuilder) add(op history.Op) {
	op.Index = int64(len(b.ops))
	op.Time = time.Duration(len(b.ops)+1) * 100 * time.Millisecond
	if op.Topic == "" && op.Kind != history.FaultStart && op.Kind != history.FaultEnd && op.Kind != history.TxnCommit && op.Kind != history.TxnAbort && op.Kind != history.Info {
		op.Topic = "t"
	}
	b.ops = append(b.ops, op)
}

func parseHist(input string) ([]history.Op, error) {
	b := &histBuilder{}
	for n, line := range strings.Split(input, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if err := b.line(f); err != nil {
			return nil, fmt.Errorf("line %d %q: %w", n+1, line, err)
		}
	}
	return b.ops, nil
}

// procOf is the process of a value "<process>-<n>".
func procOf(value string) string {
	if i := strings.LastIndexByte(value, '-'); i > 0 {
		return value[:i]
	}
	return value
}

func (b *histBuilder) line(f []string) error {
	args := f[1:]
	need := func(n int) error {
		if len(args) < n {
			return fmt.Errorf("%s wants %d arguments", f[0], n)
		}
		return nil
	}
	num := func(s string) int64 { v, _ := strconv.ParseInt(s, 10, 64); return v }
	switch f[0] {
	case "send", "sendack":
		if err := need(3); err != nil {
			return err
		}
		op := history.Op{Kind: history.Send, Process: args[0], Value: args[1], Partition: int32(num(args[2])), Offset: -1}
		if f[0] == "send" && len(args) > 3 {
			op.Txn = args[3]
		}
		b.add(op)
		if f[0] == "sendack" {
			if err := need(4); err != nil {
				return err
			}
			b.add(history.Op{Kind: history.Ack, Process: args[0], Value: args[1], Partition: int32(num(args[2])), Offset: num(args[3])})
		}
	case "ack":
		if err := need(3); err != nil {
			return err
		}
		op := history.Op{Kind: history.Ack, Process: procOf(args[0]), Value: args[0], Partition: int32(num(args[1])), Offset: num(args[2])}
		if len(args) > 3 {
			op.Txn = args[3]
		}
		b.add(op)
	case "fail", "info":
		if err := need(1); err != nil {
			return err
		}
		b.add(history.Op{Kind: history.Kind(f[0]), Process: procOf(args[0]), Value: args[0], Offset: -1})
	case "assign":
		if err := need(2); err != nil {
			return err
		}
		var ps []int32
		for _, p := range strings.Split(args[1], ",") {
			ps = append(ps, int32(num(p)))
		}
		b.add(history.Op{Kind: history.Assign, Process: args[0], Partitions: ps, Offset: -1})
	case "read", "final":
		return b.reads(f[0], args, num)
	case "commit":
		if err := need(4); err != nil {
			return err
		}
		b.add(history.Op{Kind: history.Commit, Process: args[0], Group: args[1], Partition: int32(num(args[2])), Offset: num(args[3])})
	case "txn-commit", "txn-abort", "txn-info":
		if err := need(1); err != nil {
			return err
		}
		k := map[string]history.Kind{"txn-commit": history.TxnCommit, "txn-abort": history.TxnAbort, "txn-info": history.Info}[f[0]]
		b.add(history.Op{Kind: k, Process: procOf(args[0]), Txn: args[0], Offset: -1})
	case "fault":
		if err := need(1); err != nil {
			return err
		}
		b.add(history.Op{Kind: history.FaultStart, Process: "nemesis", Fault: args[0], Offset: -1})
		b.add(history.Op{Kind: history.FaultEnd, Process: "nemesis", Fault: args[0], Offset: -1})
	default:
		return fmt.Errorf("unknown op %q", f[0])
	}
	return nil
}

// reads adds a consumer's batch ("read proc part off:value...") or a
// final read ("final part hw off:value...").
func (b *histBuilder) reads(cmd string, args []string, num func(string) int64) error {
	if len(args) < 2 {
		return fmt.Errorf("%s wants a process or partition and more", cmd)
	}
	proc, part := "final", int32(0)
	rest := args[2:]
	if cmd == "read" {
		proc, part = args[0], int32(num(args[1]))
	} else {
		part = int32(num(args[0]))
		b.add(history.Op{Kind: history.Final, Process: proc, Partition: part, Offset: num(args[1])})
	}
	b.batch++
	for _, r := range rest {
		off, val, ok := strings.Cut(r, ":")
		if !ok {
			return fmt.Errorf("read %q is not offset:value", r)
		}
		b.add(history.Op{Kind: history.Poll, Process: proc, Partition: part, Offset: num(off), Value: val, Batch: b.batch})
	}
	return nil
}

func formatResult(res Result) string {
	var sb strings.Builder
	for _, a := range res.Anomalies {
		fmt.Fprintf(&sb, "%s %s offsets=%v values=%v ops=[", a.Kind, partName(a.Topic, a.Partition), a.Offsets, a.Values)
		for i, op := range a.Ops {
			if i > 0 {
				sb.WriteByte(' ')
			}
			fmt.Fprintf(&sb, "%d:%s", op.Index, op.Kind)
		}
		fmt.Fprintf(&sb, "]\n  %s\n", a.Explain)
	}
	kinds := make([]string, 0, len(res.Omitted))
	for k := range res.Omitted {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		fmt.Fprintf(&sb, "omitted %s %d\n", k, res.Omitted[k])
	}
	if res.Stats.Unseen > 0 {
		fmt.Fprintf(&sb, "unseen %d\n", res.Stats.Unseen)
	}
	if sb.Len() == 0 {
		return "ok\n"
	}
	return sb.String()
}

func formatStats(s Stats) string {
	kinds := make([]string, 0, len(s.FaultsByKind))
	for k := range s.FaultsByKind {
		kinds = append(kinds, fmt.Sprintf("%s=%d", k, s.FaultsByKind[k]))
	}
	slices.Sort(kinds)
	return fmt.Sprintf("stats sends=%d acks=%d fails=%d infos=%d polls=%d final-reads=%d commits=%d txn-commits=%d txn-aborts=%d faults=%d %v unseen=%d\n",
		s.Sends, s.Acks, s.Fails, s.Infos, s.Polls, s.FinalReads, s.Commits, s.TxnCommits, s.TxnAborts, s.Faults, kinds, s.Unseen)
}
