package group

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
)

// ddHarness drives one Manager from a datadriven file. Writes succeed at
// once unless "fail-writes" is on; every durable record (and every marker
// of "end-txn") is kept so that "restart" can replay them into a fresh
// Manager.
type ddHarness struct {
	t   *testing.T
	cfg Config
	now time.Time
	mgr *Manager
	log []logEntry
	out *strings.Builder
	// failWrites, when set, fails every write with it.
	failWrites error
	nextID     int
}

// logEntry is one record of the harness's log: a record of a plain batch
// (producer kafka.NoProducerID), of a transaction, or a marker.
type logEntry struct {
	Record
	producer int64
	marker   bool
	commit   bool
}

func newDDHarness(t *testing.T) *ddHarness {
	h := &ddHarness{t: t, now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	h.cfg = DefaultConfig()
	h.cfg.NewMemberID = func(clientID string) string {
		h.nextID++
		return fmt.Sprintf("%s-%d", clientID, h.nextID)
	}
	h.mgr = NewManager(h.cfg, h.now)
	return h
}

func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		if strings.HasPrefix(path, "testdata/consumer/") {
			t.Skip("consumer groups: TestConsumerDataDriven")
		}
		if strings.HasPrefix(path, "testdata/share") {
			t.Skip("share groups: TestShareDataDriven")
		}
		h := newDDHarness(t)
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
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

func (h *ddHarness) printf(format string, args ...any) { fmt.Fprintf(h.out, format, args...) }

// settle completes writes and fires due timers until nothing changes.
func (h *ddHarness) settle() {
	for range 100 {
		h.mgr.Tick(h.now)
		writes := h.mgr.TakeWrites()
		if len(writes) == 0 {
			return
		}
		for _, w := range writes {
			var err error
			if h.failWrites != nil {
				err = h.failWrites
			}
			producer, txn := kafka.NoProducerID, ""
			if w.Transaction != nil {
				producer, txn = w.Transaction.ID, fmt.Sprintf(" (txn %d/%d)", w.Transaction.ID, w.Transaction.Epoch)
			}
			for _, r := range w.Records {
				h.printf("write%s%s: %s\n", txn, map[bool]string{true: " (failed)"}[err != nil], describeRecord(r))
				if err == nil {
					h.log = append(h.log, logEntry{Record: r, producer: producer})
				}
			}
			if w.Done != nil {
				w.Done(err)
			}
		}
	}
	h.t.Fatal("writes did not settle")
}

// writeErrors are the append errors "fail-writes error=..." can name.
var writeErrors = map[string]error{
	"NOT_ENOUGH_REPLICAS": kerr.NotEnoughReplicas,
	"PRODUCER_FENCED":     kerr.ProducerFenced,
	"NOT_LEADER":          kerr.NotLeaderForPartition,
}

func describeRecord(r Record) string {
	if int16(binary.BigEndian.Uint16(r.Key)) == groupKeyVersion {
		var k kmsg.GroupMetadataKey
		_ = k.ReadFrom(r.Key)
		if r.Value == nil {
			return "group " + k.Group + " tombstone"
		}
		var v kmsg.GroupMetadataValue
		if err := v.ReadFrom(r.Value); err != nil {
			return "bad group value: " + err.Error()
		}
		var ms []string
		for _, m := range v.Members {
			ms = append(ms, fmt.Sprintf("%s:%s", m.MemberID, m.Assignment))
		}
		return fmt.Sprintf("group %s gen=%d type=%q protocol=%s leader=%s members=[%s]",
			k.Group, v.Generation, v.ProtocolType, deref(v.Protocol), deref(v.Leader), strings.Join(ms, " "))
	}
	var k kmsg.OffsetCommitKey
	_ = k.ReadFrom(r.Key)
	if r.Value == nil {
		return fmt.Sprintf("offset %s %s/%d tombstone", k.Group, k.Topic, k.Partition)
	}
	var v kmsg.OffsetCommitValue
	_ = v.ReadFrom(r.Value)
	return fmt.Sprintf("offset %s %s/%d=%d epoch=%d md=%q", k.Group, k.Topic, k.Partition, v.Offset, v.LeaderEpoch, v.Metadata)
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func errName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	return kerr.ErrorForCode(code).(*kerr.Error).Message
}

func (h *ddHarness) str(td *datadriven.TestData, key, def string) string {
	if !td.HasArg(key) {
		return def
	}
	var s string
	td.ScanArgs(h.t, key, &s)
	return s
}

func (h *ddHarness) optStr(td *datadriven.TestData, key string) *string {
	if !td.HasArg(key) {
		return nil
	}
	s := h.str(td, key, "")
	return &s
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

func parseTP(t *testing.T, s string) kafka.TopicPartition {
	topic, p, ok := strings.Cut(s, "/")
	n, err := strconv.Atoi(p)
	if !ok || err != nil {
		t.Fatalf("bad partition %q", s)
	}
	return kafka.TopicPartition{Topic: topic, Partition: int32(n)}
}

func (h *ddHarness) run(td *datadriven.TestData) {
	switch td.Cmd {
	case "config":
		h.cfg.InitialRebalanceDelay = h.dur(td, "initial-delay", h.cfg.InitialRebalanceDelay)
		h.cfg.MaxSize = int(h.num(td, "max-size", int64(h.cfg.MaxSize)))
		h.cfg.OffsetsRetention = h.dur(td, "retention", h.cfg.OffsetsRetention)
		h.cfg.OffsetsRetentionCheckInterval = h.dur(td, "retention-check", h.cfg.OffsetsRetentionCheckInterval)
		h.cfg.MaxMetadataSize = int(h.num(td, "max-metadata", int64(h.cfg.MaxMetadataSize)))
		h.mgr = NewManager(h.cfg, h.now)
	case "advance":
		h.now = h.now.Add(h.dur(td, "by", 0))
	case "fail-writes":
		h.failWrites = nil
		if h.str(td, "on", "true") == "true" {
			h.failWrites = writeErrors[h.str(td, "error", "NOT_ENOUGH_REPLICAS")]
		}
	case "join":
		h.join(td)
	case "sync":
		h.sync(td)
	case "heartbeat":
		code := h.mgr.Heartbeat(h.now, HeartbeatRequest{
			GroupID: h.str(td, "group", "g"), MemberID: h.str(td, "member", ""),
			InstanceID: h.optStr(td, "instance"), GenerationID: int32(h.num(td, "gen", -1)),
		})
		h.printf("heartbeat: %s\n", errName(code))
	case "leave":
		h.leave(td)
	case "commit":
		h.commit(td)
	case "txn-commit":
		h.txnCommit(td)
	case "end-txn":
		// The marker is durable, then the coordinator learns the result,
		// as the broker's marker writer does it.
		pid, commit := h.num(td, "producer", 0), h.str(td, "result", "commit") == "commit"
		h.log = append(h.log, logEntry{producer: pid, marker: true, commit: commit})
		h.mgr.CompleteTransaction(h.now, pid, commit)
	case "txn-state":
		h.txnState()
	case "fetch":
		h.fetch(td)
	case "delete-offsets":
		var parts []kafka.TopicPartition
		for _, s := range strings.Split(h.str(td, "parts", ""), ",") {
			parts = append(parts, parseTP(h.t, s))
		}
		h.mgr.DeleteOffsets(h.now, h.str(td, "group", "g"), parts, func(code int16, codes []int16) {
			var cs []string
			for _, c := range codes {
				cs = append(cs, errName(c))
			}
			h.printf("delete-offsets: %s [%s]\n", errName(code), strings.Join(cs, " "))
		})
	case "describe":
		d := h.mgr.Describe(h.str(td, "group", "g"))
		h.printf("describe: %s state=%s type=%q protocol=%q\n", errName(d.ErrorCode), d.State, d.ProtocolType, d.Protocol)
		for _, m := range d.Members {
			h.printf("  member %s instance=%s client=%s metadata=%q assignment=%q\n", m.MemberID, deref(m.InstanceID), m.ClientID, m.Metadata, m.Assignment)
		}
	case "list":
		for _, l := range h.mgr.List() {
			h.printf("%s %s %q\n", l.GroupID, l.State, l.ProtocolType)
		}
	case "delete":
		h.mgr.Delete(h.now, h.str(td, "group", "g"), func(code int16) { h.printf("delete: %s\n", errName(code)) })
	case "restart":
		h.mgr.Shutdown(kerr.NotCoordinator.Code)
		h.mgr = NewManager(h.cfg, h.now)
		for i, e := range h.log {
			if e.marker {
				h.mgr.CompleteTransaction(h.now, e.producer, e.commit)
				continue
			}
			if err := h.mgr.Replay(h.now, int64(i), e.producer, e.Key, e.Value); err != nil {
				h.t.Fatalf("replay: %v", err)
			}
		}
		h.mgr.FinishLoad(h.now)
	case "state":
		for _, id := range h.mgr.GroupIDs() {
			g := h.mgr.groups[id]
			h.printf("%s: %s gen=%d leader=%s protocol=%q members=%v pending=%d\n", id, g.state, g.generation, g.leader, g.protocolName, g.order, len(g.pending))
		}
	default:
		h.t.Fatalf("unknown command %q", td.Cmd)
	}
}

func (h *ddHarness) join(td *datadriven.TestData) {
	name := h.str(td, "req", "join")
	var protocols []Protocol
	for _, p := range strings.Split(h.str(td, "protocols", "range"), ",") {
		pname, md, _ := strings.Cut(p, ":")
		protocols = append(protocols, Protocol{Name: pname, Metadata: []byte(md)})
	}
	if topics := h.str(td, "subscribe", ""); topics != "" {
		// Real consumer-protocol metadata, for the checks that read it.
		sub := kmsg.NewConsumerMemberMetadata()
		sub.Topics = strings.Split(topics, ",")
		for i := range protocols {
			protocols[i].Metadata = sub.AppendTo(nil)
		}
	}
	req := JoinRequest{
		GroupID: h.str(td, "group", "g"), MemberID: h.str(td, "member", ""), InstanceID: h.optStr(td, "instance"),
		ClientID: h.str(td, "client", "c"), ClientHost: "/127.0.0.1",
		SessionTimeout:       h.dur(td, "session", 10*time.Second),
		RebalanceTimeout:     h.dur(td, "rebalance", 30*time.Second),
		ProtocolType:         h.str(td, "type", "consumer"),
		Protocols:            protocols,
		RequireKnownMemberID: h.str(td, "require-id", "true") == "true",
	}
	h.mgr.Join(h.now, req, func(r JoinResult) {
		h.printf("%s: join %s member=%s gen=%d leader=%s protocol=%s", name, errName(r.ErrorCode), r.MemberID, r.GenerationID, r.LeaderID, deref(r.ProtocolName))
		if r.SkipAssignment {
			h.printf(" skip-assignment")
		}
		if len(r.Members) > 0 {
			var ms []string
			for _, m := range r.Members {
				ms = append(ms, fmt.Sprintf("%s:%q", m.MemberID, m.Metadata))
			}
			h.printf(" members=[%s]", strings.Join(ms, " "))
		}
		h.printf("\n")
	})
}

func (h *ddHarness) sync(td *datadriven.TestData) {
	name := h.str(td, "req", "sync")
	assign := map[string][]byte{}
	if s := h.str(td, "assign", ""); s != "" {
		for _, a := range strings.Split(s, ",") {
			m, v, _ := strings.Cut(a, "=")
			assign[m] = []byte(v)
		}
	}
	h.mgr.Sync(h.now, SyncRequest{
		GroupID: h.str(td, "group", "g"), MemberID: h.str(td, "member", ""), InstanceID: h.optStr(td, "instance"),
		GenerationID: int32(h.num(td, "gen", -1)), ProtocolName: h.optStr(td, "protocol"), Assignments: assign,
	}, func(r SyncResult) {
		h.printf("%s: sync %s assignment=%q\n", name, errName(r.ErrorCode), r.Assignment)
	})
}

func (h *ddHarness) leave(td *datadriven.TestData) {
	var members []LeaveMember
	for _, s := range strings.Split(h.str(td, "members", ""), ",") {
		if inst, ok := strings.CutPrefix(s, "instance:"); ok {
			members = append(members, LeaveMember{InstanceID: &inst})
		} else {
			members = append(members, LeaveMember{MemberID: s})
		}
	}
	res := h.mgr.Leave(h.now, h.str(td, "group", "g"), members)
	var cs []string
	for _, c := range res.Members {
		cs = append(cs, errName(c))
	}
	h.printf("leave: %s [%s]\n", errName(res.ErrorCode), strings.Join(cs, " "))
}

func (h *ddHarness) commit(td *datadriven.TestData) {
	h.mgr.CommitOffsets(h.now, CommitRequest{
		GroupID: h.str(td, "group", "g"), MemberID: h.str(td, "member", ""), InstanceID: h.optStr(td, "instance"),
		GenerationID: int32(h.num(td, "gen", -1)), Partitions: h.parseOffsets(td), Retention: h.dur(td, "retention", 0),
	}, func(r CommitResult) {
		var cs []string
		for _, c := range r.Errors {
			cs = append(cs, errName(c))
		}
		h.printf("commit: [%s]\n", strings.Join(cs, " "))
	})
}

func (h *ddHarness) fetch(td *datadriven.TestData) {
	var parts []kafka.TopicPartition
	if s := h.str(td, "parts", ""); s != "" {
		for _, p := range strings.Split(s, ",") {
			parts = append(parts, parseTP(h.t, p))
		}
	}
	for _, f := range h.mgr.FetchOffsets(h.str(td, "group", "g"), parts, h.str(td, "stable", "false") == "true") {
		h.printf("%s/%d=%d epoch=%d md=%q", f.TP.Topic, f.TP.Partition, f.Offset, f.LeaderEpoch, deref(f.Metadata))
		if f.ErrorCode != 0 {
			h.printf(" %s", errName(f.ErrorCode))
		}
		h.printf("\n")
	}
}

// parseOffsets reads "t/0=10,u/1=20" as commit partitions.
func (h *ddHarness) parseOffsets(td *datadriven.TestData) []CommitPartition {
	var parts []CommitPartition
	md := h.optStr(td, "metadata")
	for _, s := range strings.Split(h.str(td, "offsets", ""), ",") {
		tpS, offS, _ := strings.Cut(s, "=")
		off, err := strconv.ParseInt(offS, 10, 64)
		if err != nil {
			h.t.Fatalf("offset %q: %v", s, err)
		}
		parts = append(parts, CommitPartition{TP: parseTP(h.t, tpS), Offset: off, LeaderEpoch: 3, Metadata: md})
	}
	return parts
}

func (h *ddHarness) txnCommit(td *datadriven.TestData) {
	h.mgr.CommitTransactionalOffsets(h.now, TxnCommitRequest{
		GroupID: h.str(td, "group", "g"), ProducerID: h.num(td, "producer", 0), ProducerEpoch: int16(h.num(td, "epoch", 0)),
		MemberID: h.str(td, "member", ""), InstanceID: h.optStr(td, "instance"), GenerationID: int32(h.num(td, "gen", -1)),
		Partitions: h.parseOffsets(td),
	}, func(r CommitResult) {
		var cs []string
		for _, c := range r.Errors {
			cs = append(cs, errName(c))
		}
		h.printf("txn-commit: [%s]\n", strings.Join(cs, " "))
	})
}

// txnState prints the offsets of open transactions by producer and group.
func (h *ddHarness) txnState() {
	t := &h.mgr.txn
	for _, pid := range slices.Sorted(maps.Keys(t.byProducer)) {
		for _, g := range slices.Sorted(maps.Keys(t.byProducer[pid])) {
			for _, tp := range sortedPartitions(t.byProducer[pid][g]) {
				v := t.byProducer[pid][g][tp]
				h.printf("producer %d group %s %s/%d=%d\n", pid, g, tp.Topic, tp.Partition, v.Offset)
			}
		}
	}
	for _, g := range slices.Sorted(maps.Keys(t.byGroup)) {
		h.printf("group %s open: %v\n", g, slices.Sorted(maps.Keys(t.byGroup[g])))
	}
}
