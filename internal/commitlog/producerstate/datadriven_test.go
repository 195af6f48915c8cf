package producerstate

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/records"
)

// TestRules runs the golden files in testdata/rules. Commands:
//
//	append [origin=client|coordinator|replication] [guard=G]
//	  one batch per line: pid=P epoch=E seq=S count=N offset=O [ts=T] [txn]
//	  prints each batch's verdict; commits when every batch passed. guard
//	  requires KIP-890 verification with that guard (0: the sentinel).
//	verify pid=P epoch=E seq=S [bump]   (bump: Transactions V2, Produce v12+)
//	  starts a verification and prints its guard (0 when none is needed)
//	verifications
//	  lists the verifications in progress
//	marker pid=P epoch=E offset=O commit|abort coord=C [tv=V] [origin=...]
//	expire now=MS ms=EXPIRATION
//	hw offset=O
//	state
func TestRules(t *testing.T) {
	datadriven.Walk(t, "testdata/rules", func(t *testing.T, path string) {
		// Verifications are stamped with the clock: 1,000,000 ms here.
		m := New(Options{Name: "t-0", Clock: clock.NewManual(time.UnixMilli(1_000_000))})
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			args := parseArgs(t, d.CmdArgs)
			switch d.Cmd {
			case "append":
				a := m.BeginAppend(parseOrigin(t, args["origin"]))
				if g, ok := args["guard"]; ok {
					a.RequireVerification(VerificationGuard(mustInt(t, g)))
				}
				return runAppend(t, a, d.Input)
			case "verify":
				_, bump := args["bump"]
				g, err := m.MaybeStartVerification(num(t, args, "pid"), int32(num(t, args, "seq")), int16(num(t, args, "epoch")), bump)
				if err != nil {
					return "error " + code(err) + "\n"
				}
				return fmt.Sprintf("guard=%d\n", g)
			case "verifications":
				return dumpVerifications(m)
			case "marker":
				h := header(t, args)
				h.Attributes |= records.ControlBit | records.TransactionalBit
				_, commit := args["commit"]
				a := m.BeginAppend(parseOrigin(t, orDefault(args["origin"], "coordinator")))
				tv, _ := strconv.Atoi(orDefault(args["tv"], "0"))
				if err := a.AddMarker(h, Marker{Commit: commit, CoordinatorEpoch: int32(num(t, args, "coord")), TxnVersion: int16(tv)}); err != nil {
					return "error " + code(err) + "\n"
				}
				var b strings.Builder
				for _, ct := range a.Commit() {
					fmt.Fprintf(&b, "completed pid=%d first=%d last=%d aborted=%t lso=%d\n", ct.ProducerID, ct.FirstOffset, ct.LastOffset, ct.IsAborted, ct.LastStableOffset)
				}
				return b.String() + "ok\n"
			case "expire":
				m.RemoveExpired(num(t, args, "now"), num(t, args, "ms"))
				return dumpState(m)
			case "hw":
				m.OnHighWatermarkUpdated(num(t, args, "offset"))
				return dumpState(m)
			case "state":
				return dumpState(m)
			}
			t.Fatalf("unknown command %q", d.Cmd)
			return ""
		})
	})
}

func runAppend(t *testing.T, a *Append, input string) string {
	var b strings.Builder
	failed := false
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		h := header(t, parseArgs(t, fieldsToArgs(line)))
		v, err := a.AddBatch(h)
		switch {
		case err != nil:
			fmt.Fprintf(&b, "error %s\n", code(err))
			failed = true
		case v.Duplicate:
			fmt.Fprintf(&b, "duplicate of %d-%d\n", v.FirstOffset, v.LastOffset)
			failed = true
		default:
			b.WriteString("ok\n")
		}
		if failed {
			break
		}
	}
	if !failed {
		a.Commit()
	}
	return b.String()
}

func dumpVerifications(m *Manager) string {
	var b strings.Builder
	ids := make([]int64, 0, len(m.verifications))
	for id := range m.verifications {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		v := m.verifications[id]
		fmt.Fprintf(&b, "pid=%d guard=%d lowest-seq=%d epoch=%d ts=%d\n", id, v.guard, v.lowestSeq, v.epoch, v.timestampMs)
	}
	if b.Len() == 0 {
		return "none\n"
	}
	return b.String()
}

func code(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message
	}
	return err.Error()
}

func dumpState(m *Manager) string {
	var b strings.Builder
	for _, id := range m.ProducerIDs() {
		e, _ := m.Entry(id)
		fmt.Fprintf(&b, "pid=%d epoch=%d coord=%d txn=%d ts=%d batches=", id, e.ProducerEpoch, e.CoordinatorEpoch, e.CurrentTxnFirstOffset, e.LastTimestamp)
		for i, bm := range e.Batches() {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "[%d..%d@%d..%d]", bm.FirstSeq(), bm.LastSeq, bm.FirstOffset(), bm.LastOffset)
		}
		b.WriteString("\n")
	}
	if fus, ok := m.FirstUnstableOffset(); ok {
		fmt.Fprintf(&b, "first-unstable=%d\n", fus)
	} else {
		b.WriteString("first-unstable=none\n")
	}
	fmt.Fprintf(&b, "map-end=%d\n", m.MapEndOffset())
	return b.String()
}

func header(t *testing.T, args map[string]string) records.Header {
	count := num(t, args, "count")
	if _, ok := args["count"]; !ok {
		count = 1
	}
	h := records.Header{
		BaseOffset:      num(t, args, "offset"),
		Magic:           records.CurrentMagic,
		LastOffsetDelta: int32(count - 1),
		ProducerID:      num(t, args, "pid"),
		ProducerEpoch:   int16(num(t, args, "epoch")),
		BaseSequence:    int32(num(t, args, "seq")),
		MaxTimestamp:    1000,
		RecordCount:     int32(count),
	}
	if ts, ok := args["ts"]; ok {
		h.MaxTimestamp = mustInt(t, ts)
	}
	if _, ok := args["txn"]; ok {
		h.Attributes |= records.TransactionalBit
	}
	return h
}

func fieldsToArgs(line string) []datadriven.CmdArg {
	var out []datadriven.CmdArg
	for _, f := range strings.Fields(line) {
		k, v, _ := strings.Cut(f, "=")
		out = append(out, datadriven.CmdArg{Key: k, Vals: []string{v}})
	}
	return out
}

func parseArgs(t *testing.T, in []datadriven.CmdArg) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, a := range in {
		out[a.Key] = strings.Join(a.Vals, ",")
	}
	return out
}

func parseOrigin(t *testing.T, s string) Origin {
	switch s {
	case "", "client":
		return OriginClient
	case "coordinator":
		return OriginCoordinator
	case "replication":
		return OriginReplication
	}
	t.Fatalf("unknown origin %q", s)
	return 0
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func num(t *testing.T, args map[string]string, key string) int64 {
	t.Helper()
	v, ok := args[key]
	if !ok {
		return 0
	}
	return mustInt(t, v)
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("bad number %q: %v", s, err)
	}
	return n
}
