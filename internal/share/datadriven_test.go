package share

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"
)

// ddHarness drives one Partition as a SharePartitionManager would. Writes
// complete at once unless "hold" is on; held ones complete with "done".
type ddHarness struct {
	t    *testing.T
	base time.Time
	now  time.Time
	p    *Partition
	hold bool
	out  *strings.Builder
}

func TestDataDriven(t *testing.T) {
	files, err := filepath.Glob("testdata/partition/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no datadriven files: %v", err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			h := &ddHarness{t: t, base: time.UnixMilli(0)}
			h.now = h.base
			datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
				h.t, h.out = t, &strings.Builder{}
				h.run(td)
				return h.out.String()
			})
		})
	}
}

func (h *ddHarness) printf(format string, args ...any) { fmt.Fprintf(h.out, format, args...) }

func (h *ddHarness) run(td *datadriven.TestData) {
	switch td.Cmd {
	case "new":
		h.newPartition(td)
	case "acquire":
		h.acquire(td)
	case "ack":
		w, err := h.p.Acknowledge(h.str(td, "member", ""), parseAcks(h.t, td.Input), h.now)
		h.result(w, err)
	case "release":
		w, err := h.p.ReleaseMember(h.str(td, "member", ""), h.now)
		h.result(w, err)
	case "tick":
		h.now = h.now.Add(time.Duration(h.int(td, "ms", 0)) * time.Millisecond)
		h.result(h.p.Expire(h.now), nil)
	case "lso":
		h.printf("changed=%v\n", h.p.UpdateLogStartOffset(int64(h.int(td, "offset", 0))))
	case "hold":
		h.hold = h.str(td, "on", "true") == "true"
		return
	case "done":
		h.done(td)
	case "config":
		cfg := h.p.cfg
		cfg.DeliveryCountLimit = h.int(td, "limit", cfg.DeliveryCountLimit)
		cfg.MaxInFlightRecords = h.int(td, "max-locks", cfg.MaxInFlightRecords)
		h.p.SetConfig(cfg)
	case "state":
	default:
		h.t.Fatalf("unknown command %q", td.Cmd)
	}
	h.state()
}

func (h *ddHarness) newPartition(td *datadriven.TestData) {
	cfg := DefaultConfig()
	cfg.MaxInFlightRecords = h.int(td, "max-locks", cfg.MaxInFlightRecords)
	cfg.DeliveryCountLimit = h.int(td, "limit", cfg.DeliveryCountLimit)
	cfg.RecordLockDuration = time.Duration(h.int(td, "lock-ms", 30000)) * time.Millisecond
	st := PersistedState{StateEpoch: int32(h.int(td, "state-epoch", 0)), StartOffset: int64(h.int(td, "start", -1))}
	for _, line := range lines(td.Input) {
		var first, last, count int64
		var state string
		if _, err := fmt.Sscanf(line, "%d-%d %s %d", &first, &last, &state, &count); err != nil {
			h.t.Fatalf("bad state batch %q: %v", line, err)
		}
		st.Batches = append(st.Batches, StateBatch{first, last, parseState(h.t, state), int16(count)})
	}
	p, err := NewPartition(cfg, int32(h.int(td, "leader-epoch", 0)), st, int64(h.int(td, "reset", 0)))
	h.p = p
	if err != nil {
		h.printf("error: %v\n", err)
	}
}

func (h *ddHarness) acquire(td *datadriven.TestData) {
	fetch := h.p.NextFetchOffset()
	req := AcquireRequest{
		MemberID: h.str(td, "member", ""), BatchSize: h.int(td, "batch-size", 500),
		MaxRecords: h.int(td, "max", 500), FetchOffset: int64(h.int(td, "fetch", int(fetch))),
		ReadCommitted: h.str(td, "isolation", "") == "read_committed",
	}
	if h.str(td, "mode", "") == "record_limit" {
		req.Mode = RecordLimit
	}
	for _, line := range lines(td.Input) {
		if a, ok := strings.CutPrefix(line, "aborted "); ok {
			var pid, first int64
			fmt.Sscanf(a, "pid=%d first=%d", &pid, &first)
			req.Aborted = append(req.Aborted, AbortedTxn{pid, first})
			continue
		}
		req.Batches = append(req.Batches, parseFetched(h.t, line))
	}
	recs, n := h.p.Acquire(req, h.now)
	h.printf("fetch-offset=%d acquired=%d", req.FetchOffset, n)
	for _, r := range recs {
		h.printf(" %d-%d(%d)", r.FirstOffset, r.LastOffset, r.DeliveryCount)
	}
	h.printf("\n")
}

// parseFetched reads "base-last [pid=N] [txn] [abort]".
func parseFetched(t *testing.T, line string) FetchedBatch {
	f := strings.Fields(line)
	fb := FetchedBatch{ProducerID: -1}
	if _, err := fmt.Sscanf(f[0], "%d-%d", &fb.BaseOffset, &fb.LastOffset); err != nil {
		t.Fatalf("bad fetched batch %q", line)
	}
	for _, w := range f[1:] {
		switch {
		case strings.HasPrefix(w, "pid="):
			fb.ProducerID, _ = strconv.ParseInt(w[4:], 10, 64)
		case w == "txn":
			fb.Transactional = true
		case w == "abort":
			fb.AbortMarker = true
		}
	}
	return fb
}

// parseAcks reads lines "first-last type[,type...]".
func parseAcks(t *testing.T, input string) []AckBatch {
	var out []AckBatch
	for _, line := range lines(input) {
		var b AckBatch
		var types string
		if _, err := fmt.Sscanf(line, "%d-%d %s", &b.FirstOffset, &b.LastOffset, &types); err != nil {
			t.Fatalf("bad ack %q", line)
		}
		for _, s := range strings.Split(types, ",") {
			v, _ := strconv.Atoi(s)
			b.AcknowledgeTypes = append(b.AcknowledgeTypes, int8(v))
		}
		out = append(out, b)
	}
	return out
}

func parseState(t *testing.T, s string) RecordState {
	for _, st := range []RecordState{Available, Acquired, Acknowledged, Archived} {
		if st.String() == s {
			return st
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("bad state %q", s)
	}
	return RecordState(v)
}

func (h *ddHarness) result(w *Write, err error) {
	if err != nil {
		var ke *kerr.Error
		errors.As(err, &ke)
		h.printf("error: %s: %s\n", ke.Message, strings.Split(err.Error(), ": "+ke.Message)[0])
		return
	}
	if w == nil {
		h.printf("no write\n")
		return
	}
	h.printf("write %d: start=%d complete=%d", w.ID, w.StartOffset, w.DeliveryCompleteCount)
	for _, b := range w.Batches {
		h.printf(" [%d-%d %s %d]", b.FirstOffset, b.LastOffset, b.DeliveryState, b.DeliveryCount)
	}
	h.printf("\n")
	if !h.hold {
		h.complete(w.ID, nil)
	}
}

func (h *ddHarness) done(td *datadriven.TestData) {
	var err error
	if code := h.int(td, "err", 0); code != 0 {
		err = PersisterError(int16(code))
	}
	h.complete(uint64(h.int(td, "id", 0)), err)
}

func (h *ddHarness) complete(id uint64, err error) {
	changed, derr := h.p.WriteDone(id, err, h.now)
	if derr != nil {
		h.printf("error: %v\n", derr)
		return
	}
	if err != nil {
		h.printf("write %d failed: %v\n", id, err)
	}
	if changed {
		h.printf("write %d done: window moved\n", id)
	}
}

// state prints the window and every in-flight range.
func (h *ddHarness) state() {
	if h.p == nil {
		return
	}
	p := h.p
	h.printf("spso=%d speo=%d next=%d can-acquire=%v", p.StartOffset(), p.EndOffset(), p.NextFetchOffset(), p.CanAcquire())
	if d, ok := p.NextDeadline(); ok {
		h.printf(" deadline=%d", d.Sub(h.base).Milliseconds())
	}
	h.printf("\n")
	for _, b := range p.batches {
		if b.offsets == nil {
			h.printf("  %d-%d %s\n", b.first, b.last, h.rec(&b.batch))
			continue
		}
		for o := b.first; o <= b.last; o++ {
			h.printf("  %d-%d/%d %s\n", b.first, b.last, o, h.rec(b.at(o)))
		}
	}
}

func (h *ddHarness) rec(r *recState) string {
	s := fmt.Sprintf("%s count=%d", r.state, r.count)
	if r.member != "" {
		s += " member=" + r.member
	}
	if !r.deadline.IsZero() {
		s += fmt.Sprintf(" until=%d", r.deadline.Sub(h.base).Milliseconds())
	}
	if r.pend != nil {
		s += " (writing)"
	}
	return s
}

func lines(input string) []string {
	var out []string
	for _, l := range strings.Split(input, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func (h *ddHarness) int(td *datadriven.TestData, key string, def int) int {
	for _, a := range td.CmdArgs {
		if a.Key == key {
			v, err := strconv.Atoi(a.Vals[0])
			if err != nil {
				h.t.Fatalf("bad %s: %v", key, err)
			}
			return v
		}
	}
	return def
}

func (h *ddHarness) str(td *datadriven.TestData, key, def string) string {
	for _, a := range td.CmdArgs {
		if a.Key == key {
			if len(a.Vals) == 0 {
				return "true"
			}
			return a.Vals[0]
		}
	}
	return def
}
