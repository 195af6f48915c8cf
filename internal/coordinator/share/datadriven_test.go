package share

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/kafka"
)

// ddHarness drives one Manager as the coordinator service would: writes
// complete at once (appended to an in-memory log) unless held, and
// "replay" loads that log into a fresh Manager and checks that it rebuilds
// the live state.
type ddHarness struct {
	t      *testing.T
	base   time.Time
	now    time.Time
	cfg    Config
	topics map[kafka.UUID]int32
	mgr    *Manager
	log    []Record
	held   []Write
	hold   bool
	out    *strings.Builder
}

func newDDHarness(t *testing.T) *ddHarness {
	h := &ddHarness{t: t, base: time.UnixMilli(1_000_000), topics: map[kafka.UUID]int32{}}
	h.now = h.base
	h.cfg = DefaultConfig()
	h.cfg.PartitionCount = func(id kafka.UUID) (int32, bool) { n, ok := h.topics[id]; return n, ok }
	h.mgr = NewManager(h.cfg, h.now)
	return h
}

func TestDataDriven(t *testing.T) {
	files, err := filepath.Glob("testdata/dd/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no datadriven files: %v", err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			h := newDDHarness(t)
			datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
				h.t, h.out = t, &strings.Builder{}
				h.run(td)
				h.settle()
				if h.out.Len() == 0 {
					return "ok\n"
				}
				return h.out.String()
			})
		})
	}
}

func (h *ddHarness) printf(format string, args ...any) { fmt.Fprintf(h.out, format, args...) }

// topicID names a test topic by a letter: topic "a" is UUID{'a'}.
func topicID(name string) kafka.UUID { return kafka.UUID{0: name[0]} }

func topicName(id kafka.UUID) string { return string(id[0]) }

func (h *ddHarness) run(td *datadriven.TestData) {
	switch td.Cmd {
	case "config":
		h.cfg.SnapshotUpdateRecordsPerSnapshot = h.intArg(td, "per-snapshot", h.cfg.SnapshotUpdateRecordsPerSnapshot)
		h.cfg.ColdPartitionSnapshotInterval = time.Duration(h.intArg(td, "cold-ms", int(h.cfg.ColdPartitionSnapshotInterval.Milliseconds()))) * time.Millisecond
		h.mgr = NewManager(h.cfg, h.now)
	case "topic":
		h.topics[topicID(h.strArg(td, "name", ""))] = int32(h.intArg(td, "partitions", 1))
	case "delete-topic":
		id := topicID(h.strArg(td, "name", ""))
		delete(h.topics, id)
		h.mgr.CleanupTopics([]kafka.UUID{id})
	case "advance":
		h.now = h.now.Add(time.Duration(h.intArg(td, "ms", 0)) * time.Millisecond)
		h.mgr.Tick(h.now)
	case "hold":
		h.hold = true
	case "release", "fail":
		h.complete(td.Cmd == "fail")
	case "init", "write", "read", "summary", "delete":
		h.op(td)
	case "state":
		h.printState(h.mgr)
	case "replay":
		h.replay()
	case "redundant":
		h.printf("%s\n", redundant(h.mgr))
	default:
		h.t.Fatalf("unknown command %q", td.Cmd)
	}
}

func (h *ddHarness) op(td *datadriven.TestData) {
	k := Key{GroupID: h.strArg(td, "group", "g"), TopicID: topicID(h.strArg(td, "topic", "a")), Partition: int32(h.intArg(td, "partition", 0))}
	stateEpoch, leaderEpoch := int32(h.intArg(td, "state-epoch", 0)), int32(h.intArg(td, "leader-epoch", 0))
	start := int64(h.intArg(td, "start", -1))
	cmd := td.Cmd // td is reused by later commands; replies may come later
	done := func(r Result) { h.printf("%s: %s\n", cmd, result(r)) }
	switch td.Cmd {
	case "init":
		h.mgr.Initialize(h.now, InitializeRequest{Key: k, StateEpoch: stateEpoch, StartOffset: start}, done)
	case "write":
		h.mgr.Write(h.now, WriteRequest{Key: k, StateEpoch: stateEpoch, LeaderEpoch: leaderEpoch, StartOffset: start,
			DeliveryCompleteCount: int32(h.intArg(td, "dcc", -1)), StateBatches: parseBatches(h.t, h.strArg(td, "batches", "-"))}, done)
	case "read":
		h.mgr.Read(h.now, ReadRequest{Key: k, LeaderEpoch: leaderEpoch}, func(r ReadResult) {
			if r.ErrorCode != 0 {
				done(r.Result)
				return
			}
			h.printf("read: state-epoch=%d start=%d batches=%s\n", r.StateEpoch, r.StartOffset, formatBatches(r.StateBatches))
		})
	case "summary":
		r := h.mgr.ReadSummary(ReadRequest{Key: k, LeaderEpoch: leaderEpoch})
		if r.ErrorCode != 0 {
			done(r.Result)
			return
		}
		h.printf("summary: state-epoch=%d leader-epoch=%d start=%d dcc=%d\n", r.StateEpoch, r.LeaderEpoch, r.StartOffset, r.DeliveryCompleteCount)
	case "delete":
		h.mgr.Delete(k, done)
	}
}

// settle takes the Manager's writes: each is appended to the log and
// completed, unless writes are held.
func (h *ddHarness) settle() {
	for _, w := range h.mgr.TakeWrites() {
		for _, r := range w.Records {
			h.printf("> %s\n", formatRecord(h.t, r))
		}
		h.held = append(h.held, w)
	}
	if !h.hold {
		h.complete(false)
	}
}

// complete ends the held writes: durable (appended to the log) or failed
// with NOT_ENOUGH_REPLICAS.
func (h *ddHarness) complete(failed bool) {
	held := h.held
	h.held, h.hold = nil, false
	for _, w := range held {
		if failed {
			w.Done(kerr.NotEnoughReplicas)
			continue
		}
		for _, r := range w.Records {
			// The service reports each appended record's offset, as it
			// learns it from the append.
			h.mgr.SnapshotAppended(r.Key, r.Value, int64(len(h.log)))
			h.log = append(h.log, r)
		}
		w.Done(nil)
	}
}

// replay loads the log into a fresh Manager and checks that it holds the
// live state.
func (h *ddHarness) replay() {
	m := NewManager(h.cfg, h.now)
	for i, r := range h.log {
		if err := m.Replay(int64(i), r.Key, r.Value); err != nil {
			h.t.Fatalf("replaying record %d: %v", i, err)
		}
	}
	live, loaded := &strings.Builder{}, &strings.Builder{}
	out := h.out
	h.out = live
	h.printState(h.mgr)
	h.out = loaded
	h.printState(m)
	h.out = out
	fmt.Fprintf(live, "redundant below: %s\n", redundant(h.mgr))
	fmt.Fprintf(loaded, "redundant below: %s\n", redundant(m))
	if live.String() != loaded.String() {
		h.printf("MISMATCH\nlive:\n%sreplayed:\n%s", live, loaded)
		return
	}
	h.printf("replayed %d records: same state\n%s", len(h.log), loaded)
}

func (h *ddHarness) printState(m *Manager) {
	for _, k := range m.Keys() {
		st := m.states[k]
		o := st.offset
		h.printf("%s/%s/%d: snapshot-epoch=%d state-epoch=%d leader-epoch=%d start=%d dcc=%d created=%d written=%d batches=%s | max-leader=%d max-state=%s updates=%d\n",
			k.GroupID, topicName(k.TopicID), k.Partition, o.SnapshotEpoch, o.StateEpoch, o.LeaderEpoch, o.StartOffset,
			o.DeliveryCompleteCount, o.CreateTimestamp-h.base.UnixMilli(), o.WriteTimestamp-h.base.UnixMilli(),
			formatBatches(o.StateBatches), st.leaderEpoch, optEpoch(st.stateEpoch, st.hasStateEpoch), st.updates)
	}
}

func redundant(m *Manager) string {
	o, ok := m.LastRedundantOffset()
	if !ok {
		return "none"
	}
	return strconv.FormatInt(o, 10)
}

func optEpoch(e int32, ok bool) string {
	if !ok {
		return "none"
	}
	return strconv.Itoa(int(e))
}

func result(r Result) string {
	if r.ErrorCode == 0 {
		return "ok"
	}
	e := kerr.ErrorForCode(r.ErrorCode).(*kerr.Error)
	if r.ErrorMessage != nil && *r.ErrorMessage != e.Description {
		return e.Message + " (" + *r.ErrorMessage + ")"
	}
	return e.Message
}

func formatRecord(t *testing.T, r Record) string {
	rec, ok, err := decodeRecord(r.Key, r.Value)
	if err != nil || !ok {
		t.Fatalf("emitted record does not decode: %v", err)
	}
	k := fmt.Sprintf("%s/%s/%d", rec.key.GroupID, topicName(rec.key.TopicID), rec.key.Partition)
	switch {
	case rec.snapshot != nil:
		v := rec.snapshot
		return fmt.Sprintf("snapshot %s: snapshot-epoch=%d state-epoch=%d leader-epoch=%d start=%d dcc=%d batches=%s",
			k, v.SnapshotEpoch, v.StateEpoch, v.LeaderEpoch, v.StartOffset, v.DeliveryCompleteCount, formatBatches(v.StateBatches))
	case rec.update != nil:
		v := rec.update
		return fmt.Sprintf("update %s: snapshot-epoch=%d leader-epoch=%d start=%d dcc=%d batches=%s",
			k, v.SnapshotEpoch, v.LeaderEpoch, v.StartOffset, v.DeliveryCompleteCount, formatBatches(v.StateBatches))
	}
	return "tombstone " + k
}

// formatBatches writes batches as first-last/state/count joined by ','
// ("-" for none), the form of combine.golden.
func formatBatches(bs []StateBatch) string {
	if len(bs) == 0 {
		return "-"
	}
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = fmt.Sprintf("%d-%d/%d/%d", b.FirstOffset, b.LastOffset, b.DeliveryState, b.DeliveryCount)
	}
	return strings.Join(parts, ",")
}

func parseBatches(t testing.TB, s string) []StateBatch {
	if s == "-" {
		return nil
	}
	var out []StateBatch
	for _, p := range strings.Split(s, ",") {
		var b StateBatch
		if _, err := fmt.Sscanf(p, "%d-%d/%d/%d", &b.FirstOffset, &b.LastOffset, &b.DeliveryState, &b.DeliveryCount); err != nil {
			t.Fatalf("bad batch %q: %v", p, err)
		}
		out = append(out, b)
	}
	return out
}

func (h *ddHarness) strArg(td *datadriven.TestData, name, def string) string {
	for _, a := range td.CmdArgs {
		if a.Key == name {
			return strings.Join(a.Vals, ",")
		}
	}
	return def
}

func (h *ddHarness) intArg(td *datadriven.TestData, name string, def int) int {
	s := h.strArg(td, name, "")
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		h.t.Fatalf("%s=%q: %v", name, s, err)
	}
	return n
}
