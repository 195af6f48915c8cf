package txn

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
)

// ddHarness drives one Manager from a datadriven file, as the coordinator
// service would: it completes writes (or fails or holds them), answers
// NeedProducerID with the next id of its own allocator, fires timers on a
// manual clock and keeps the durable records so that "restart" can replay
// them into a fresh Manager.
type ddHarness struct {
	t        *testing.T
	base     time.Time
	now      time.Time
	cfg      Config
	serverTV TransactionVersion
	mgr      *Manager
	log      []Record
	markers  []MarkerJob
	held     []Write
	failCode int16
	hold     bool
	nextPID  int64
	out      *strings.Builder
}

const ddCoordinatorEpoch = 5

func newDDHarness(t *testing.T) *ddHarness {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := &ddHarness{t: t, base: base, now: base, serverTV: TV2, nextPID: 1000}
	h.cfg = DefaultConfig()
	h.cfg.TransactionVersion = func() TransactionVersion { return h.serverTV }
	h.cfg.OffsetsPartitionFor = func(group string) int32 { return int32(len(group)) }
	h.mgr = NewManager(h.cfg, ddCoordinatorEpoch, h.now)
	return h
}

// TestDataDriven runs the files of testdata (the fuzz corpus aside).
func TestDataDriven(t *testing.T) {
	files, err := filepath.Glob("testdata/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		if fi, err := os.Stat(path); err != nil || fi.IsDir() {
			continue
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			h := newDDHarness(t)
			datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
				h.t = t
				h.out = &strings.Builder{}
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

// settle fires timers, takes marker jobs and completes writes until
// nothing changes.
func (h *ddHarness) settle() {
	for range 100 {
		h.mgr.Tick(h.now)
		for _, j := range h.mgr.TakeMarkers() {
			h.printf("marker: %s\n", describeJob(j))
			h.markers = append(h.markers, j)
		}
		writes := h.mgr.TakeWrites()
		if len(writes) == 0 {
			return
		}
		if h.hold {
			for _, w := range writes {
				for _, r := range w.Records {
					h.printf("held: %s\n", describeRecord(h.base, r))
				}
			}
			h.held = append(h.held, writes...)
			continue
		}
		h.complete(writes, h.failCode)
	}
	h.t.Fatal("writes did not settle")
}

func (h *ddHarness) complete(writes []Write, failCode int16) {
	for _, w := range writes {
		var err error
		if failCode != 0 {
			err = kerr.ErrorForCode(failCode)
		}
		for _, r := range w.Records {
			if err != nil {
				h.printf("write failed (%s): %s\n", errName(failCode), describeRecord(h.base, r))
				continue
			}
			h.printf("write: %s\n", describeRecord(h.base, r))
			h.log = append(h.log, r)
		}
		if w.Done != nil {
			w.Done(err)
		}
	}
}

func describeJob(j MarkerJob) string {
	result := "abort"
	if j.Commit {
		result = "commit"
	}
	return fmt.Sprintf("%s %s pid=%d epoch=%d coordinator-epoch=%d parts=%s",
		j.TransactionalID, result, j.ProducerID, j.ProducerEpoch, j.CoordinatorEpoch, partsString(j.Partitions))
}

func partsString(parts []kafka.TopicPartition) string {
	s := make([]string, len(parts))
	for i, tp := range parts {
		s[i] = fmt.Sprintf("%s/%d", tp.Topic, tp.Partition)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// ms renders a timestamp relative to the harness's start.
func ms(base time.Time, ts int64) string {
	if ts == -1 {
		return "-"
	}
	return strconv.FormatInt(ts-base.UnixMilli(), 10)
}

func describeRecord(base time.Time, r Record) string {
	var k kmsg.TxnMetadataKey
	if err := k.ReadFrom(r.Key); err != nil {
		return "bad key: " + err.Error()
	}
	if r.Value == nil {
		return k.TransactionalID + " tombstone"
	}
	v := kmsg.NewTxnMetadataValue()
	if err := v.ReadFrom(r.Value); err != nil {
		return "bad value: " + err.Error()
	}
	var parts []kafka.TopicPartition
	for _, t := range v.Topics {
		for _, p := range t.Partitions {
			parts = append(parts, kafka.TopicPartition{Topic: t.Topic, Partition: p})
		}
	}
	partsS := partsString(parts)
	if v.Topics == nil {
		partsS = "null"
	}
	return fmt.Sprintf("%s v%d %s pid=%d epoch=%d parts=%s timeout=%d start=%s update=%s prev=%d next=%d tv=%d",
		k.TransactionalID, v.Version, State(v.State), v.ProducerID, v.ProducerEpoch, partsS, v.TimeoutMillis,
		ms(base, v.StartTimestamp), ms(base, v.LastUpdateTimestamp), v.PreviousProducerID, v.NextProducerID,
		v.ClientTransactionVersion)
}

func errName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	return kerr.ErrorForCode(code).(*kerr.Error).Message
}

func errCode(t *testing.T, name string) int16 {
	for c := int16(-1); c < 200; c++ {
		if e, ok := kerr.ErrorForCode(c).(*kerr.Error); ok && e.Message == name {
			return c
		}
	}
	t.Fatalf("unknown error %q", name)
	return 0
}

func (h *ddHarness) str(td *datadriven.TestData, key, def string) string {
	if !td.HasArg(key) {
		return def
	}
	var s string
	td.ScanArgs(h.t, key, &s)
	return s
}

func (h *ddHarness) num(td *datadriven.TestData, key string, def int64) int64 {
	s := h.str(td, key, "")
	if s == "" {
		return def
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		h.t.Fatalf("%s: %v", key, err)
	}
	return n
}

func (h *ddHarness) dur(td *datadriven.TestData, key string, def time.Duration) time.Duration {
	s := h.str(td, key, "")
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		h.t.Fatalf("%s: %v", key, err)
	}
	return d
}

func (h *ddHarness) parts(td *datadriven.TestData) []kafka.TopicPartition {
	var out []kafka.TopicPartition
	for _, s := range strings.Split(h.str(td, "parts", ""), ",") {
		if s == "" {
			continue
		}
		topic, p, ok := strings.Cut(s, "/")
		n, err := strconv.Atoi(p)
		if !ok || err != nil {
			h.t.Fatalf("bad partition %q", s)
		}
		out = append(out, kafka.TopicPartition{Topic: topic, Partition: int32(n)})
	}
	return out
}

func (h *ddHarness) run(td *datadriven.TestData) {
	switch td.Cmd {
	case "config":
		h.cfg.MaxTimeout = h.dur(td, "max-timeout", h.cfg.MaxTimeout)
		h.cfg.TransactionalIDExpiration = h.dur(td, "expiration", h.cfg.TransactionalIDExpiration)
		h.cfg.AbortTimedOutInterval = h.dur(td, "abort-interval", h.cfg.AbortTimedOutInterval)
		h.cfg.RemoveExpiredInterval = h.dur(td, "remove-interval", h.cfg.RemoveExpiredInterval)
		h.serverTV = TransactionVersion(h.num(td, "tv", int64(h.serverTV)))
		h.mgr = NewManager(h.cfg, ddCoordinatorEpoch, h.now)
	case "server-tv":
		h.serverTV = TransactionVersion(h.num(td, "tv", 2))
	case "advance":
		h.now = h.now.Add(h.dur(td, "by", 0))
	case "fail-writes":
		h.failCode = 0
		if s := h.str(td, "code", "off"); s != "off" {
			h.failCode = errCode(h.t, s)
		}
	case "hold-writes":
		h.hold = true
	case "release-writes":
		h.hold = false
		held := h.held
		h.held = nil
		code := int16(0)
		if s := h.str(td, "fail", ""); s != "" {
			code = errCode(h.t, s)
		}
		h.complete(held, code)
	case "init":
		h.init(td)
	case "add", "add-offsets":
		h.add(td)
	case "verify":
		codes := h.mgr.Verify(VerifyRequest{
			TransactionalID: h.str(td, "id", "t"), ProducerID: h.num(td, "pid", -1),
			ProducerEpoch: int16(h.num(td, "epoch", -1)), Partitions: h.parts(td),
		})
		names := make([]string, len(codes))
		for i, c := range codes {
			names[i] = errName(c)
		}
		h.printf("verify: [%s]\n", strings.Join(names, " "))
	case "end":
		h.end(td)
	case "markers-written":
		h.markersWritten(td)
	case "describe":
		h.describe(h.str(td, "id", "t"))
	case "list":
		h.list(td)
	case "state":
		h.state()
	case "deadline":
		h.printf("next deadline: %s\n", ms(h.base, h.mgr.NextDeadline().UnixMilli()))
	case "restart":
		h.restart()
	case "kafka-record":
		h.kafkaRecord(td)
	case "raw-record":
		// Hex bytes of a record not written by us (another key version,
		// a corrupt value).
		key, err1 := hex.DecodeString(h.str(td, "key", ""))
		value, err2 := hex.DecodeString(h.str(td, "value", ""))
		if err1 != nil || err2 != nil {
			h.t.Fatalf("raw-record: bad hex")
		}
		h.log = append(h.log, Record{Key: key, Value: value})
	default:
		h.t.Fatalf("unknown command %q", td.Cmd)
	}
}

// init runs an InitProducerId as the service does: once without a fresh
// producer id, and again with one if the Manager asks for it.
func (h *ddHarness) init(td *datadriven.TestData) {
	req := InitRequest{
		TransactionalID: h.str(td, "id", "t"), TimeoutMs: int32(h.dur(td, "timeout", time.Minute).Milliseconds()),
		ProducerID: h.num(td, "pid", -1), ProducerEpoch: int16(h.num(td, "epoch", -1)),
	}
	var answer func(InitResult)
	answer = func(r InitResult) {
		if r.NeedProducerID {
			h.printf("init %s: need producer id (gets %d)\n", req.TransactionalID, h.nextPID)
			id := h.nextPID
			req.FreshProducerID = &id
			h.nextPID++
			h.mgr.InitProducerID(h.now, req, answer)
			return
		}
		h.printf("init %s: %s pid=%d epoch=%d\n", req.TransactionalID, errName(r.ErrorCode), r.ProducerID, r.ProducerEpoch)
	}
	h.mgr.InitProducerID(h.now, req, answer)
}

func (h *ddHarness) add(td *datadriven.TestData) {
	id, cmd := h.str(td, "id", "t"), td.Cmd
	reply := func(code int16) { h.printf("%s %s: %s\n", cmd, id, errName(code)) }
	pid, epoch := h.num(td, "pid", -1), int16(h.num(td, "epoch", -1))
	if cmd == "add-offsets" {
		h.mgr.AddOffsets(h.now, AddOffsetsRequest{TransactionalID: id, ProducerID: pid, ProducerEpoch: epoch, GroupID: h.str(td, "group", "g")}, reply)
		return
	}
	h.mgr.AddPartitions(h.now, AddPartitionsRequest{
		TransactionalID: id, ProducerID: pid, ProducerEpoch: epoch, Partitions: h.parts(td),
		ClientTransactionVersion: TransactionVersion(h.num(td, "tv", 0)),
	}, reply)
}

func (h *ddHarness) end(td *datadriven.TestData) {
	req := EndTxnRequest{
		TransactionalID: h.str(td, "id", "t"), ProducerID: h.num(td, "pid", -1),
		ProducerEpoch: int16(h.num(td, "epoch", -1)), Commit: h.str(td, "commit", "true") == "true",
		ClientTransactionVersion: EndTxnClientVersion(int16(h.num(td, "version", 4))),
	}
	var answer func(EndTxnResult)
	answer = func(r EndTxnResult) {
		if r.NeedProducerID {
			h.printf("end %s: need producer id (gets %d)\n", req.TransactionalID, h.nextPID)
			id := h.nextPID
			req.FreshProducerID = &id
			h.nextPID++
			h.mgr.EndTxn(h.now, req, answer)
			return
		}
		h.printf("end %s: %s pid=%d epoch=%d\n", req.TransactionalID, errName(r.ErrorCode), r.ProducerID, r.ProducerEpoch)
	}
	h.mgr.EndTxn(h.now, req, answer)
}

// markersWritten reports the marker jobs taken so far (of one id, or all)
// as written.
func (h *ddHarness) markersWritten(td *datadriven.TestData) {
	id := h.str(td, "id", "")
	var kept []MarkerJob
	for _, j := range h.markers {
		if id != "" && j.TransactionalID != id {
			kept = append(kept, j)
			continue
		}
		h.mgr.MarkersWritten(h.now, j)
	}
	h.markers = kept
}

func (h *ddHarness) describe(id string) {
	d := h.mgr.Describe(id)
	if d.ErrorCode != 0 {
		h.printf("describe %s: %s\n", id, errName(d.ErrorCode))
		return
	}
	h.printf("describe %s: %s pid=%d epoch=%d timeout=%d start=%s parts=%s\n",
		id, d.State, d.ProducerID, d.ProducerEpoch, d.TimeoutMs, ms(h.base, d.StartTimestamp), partsString(d.Partitions))
}

func (h *ddHarness) list(td *datadriven.TestData) {
	f := ListFilter{DurationMs: h.dur(td, "duration", -time.Millisecond).Milliseconds()}
	if s := h.str(td, "states", ""); s != "" {
		f.States = strings.Split(s, ",")
	}
	for _, s := range strings.Split(h.str(td, "pids", ""), ",") {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			f.ProducerIDs = append(f.ProducerIDs, n)
		}
	}
	if p := h.str(td, "prefix", ""); p != "" {
		f.MatchID = func(id string) bool { return strings.HasPrefix(id, p) }
	}
	listed, unknown := h.mgr.List(h.now, f)
	if len(unknown) > 0 {
		h.printf("unknown state filters %v\n", unknown)
	}
	for _, l := range listed {
		h.printf("%s pid=%d %s\n", l.TransactionalID, l.ProducerID, l.State)
	}
}

// state dumps every transaction's fields, the ones the log does not hold
// included.
func (h *ddHarness) state() {
	for _, id := range h.mgr.TransactionalIDs() {
		t := h.mgr.txns[id]
		pending := "-"
		if t.hasPending {
			pending = t.pending.String()
		}
		h.printf("%s: %s pending=%s pid=%d prev=%d next=%d epoch=%d last=%d timeout=%d start=%s update=%s tv=%d parts=%s\n",
			id, t.state, pending, t.producerID, t.prevProducerID, t.nextProducerID, t.producerEpoch, t.lastProducerEpoch,
			t.timeoutMs, ms(h.base, t.startTimestamp), ms(h.base, t.lastUpdateTimestamp), t.clientVersion,
			partsString(sortedPartitions(t.partitions)))
	}
}

// restart replays the durable records into a new Manager, as a new
// coordinator loads the partition; held writes and marker jobs are lost.
func (h *ddHarness) restart() {
	h.mgr.Shutdown(kerr.NotCoordinator.Code)
	h.held, h.hold, h.markers = nil, false, nil
	h.mgr = NewManager(h.cfg, ddCoordinatorEpoch+1, h.now)
	for _, r := range h.log {
		if err := h.mgr.Replay(h.now, r.Key, r.Value); err != nil {
			h.printf("replay skipped: %v\n", err)
		}
	}
	h.mgr.FinishLoad(h.now)
}

// kafkaRecord appends a record laid out as Kafka writes it to the log.
func (h *ddHarness) kafkaRecord(td *datadriven.TestData) {
	id := h.str(td, "id", "t")
	if h.str(td, "tombstone", "") == "true" {
		h.log = append(h.log, Record{Key: kafkaKey(id)})
		return
	}
	v := newKafkaValue(int16(h.num(td, "version", 1)))
	v.producerID, v.producerEpoch = h.num(td, "pid", 1), int16(h.num(td, "epoch", 0))
	v.timeoutMs = int32(h.dur(td, "timeout", time.Minute).Milliseconds())
	st, ok := ParseState(h.str(td, "state", "Empty"))
	if !ok {
		h.t.Fatalf("bad state")
	}
	v.status = int8(st)
	if st != Empty {
		v.partitions = map[string][]int32{}
		for _, tp := range h.parts(td) {
			v.partitions[tp.Topic] = append(v.partitions[tp.Topic], tp.Partition)
		}
	}
	v.startMs = h.base.UnixMilli() + h.num(td, "start", 0)
	if st == Empty {
		v.startMs = -1
	}
	v.lastUpdateMs = h.base.UnixMilli() + h.num(td, "update", 0)
	v.prevProducerID, v.nextProducerID = h.num(td, "prev", -1), h.num(td, "next", -1)
	v.clientTransactionVersion = int16(h.num(td, "tv", 0))
	v.nextProducerEpoch = int16(h.num(td, "next-epoch", -1))
	h.log = append(h.log, Record{Key: kafkaKey(id), Value: v.bytes()})
}
