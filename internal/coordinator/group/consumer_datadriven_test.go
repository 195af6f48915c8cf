package group

import (
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

	cr "github.com/sluice-io/sluice/internal/coordinator/group/consumerrec"
	"github.com/sluice-io/sluice/internal/kafka"
)

// cddTopics is an immutable Topics snapshot; every change makes a new one
// with a higher version, as the metadata image does.
type cddTopics struct {
	byName  map[string]TopicInfo
	version int64
}

func (t *cddTopics) ByName(n string) (TopicInfo, bool) { ti, ok := t.byName[n]; return ti, ok }

func (t *cddTopics) ByID(id kafka.UUID) (TopicInfo, bool) {
	for _, ti := range t.byName {
		if ti.ID == id {
			return ti, true
		}
	}
	return TopicInfo{}, false
}

func (t *cddTopics) Names() []string { return slices.Sorted(maps.Keys(t.byName)) }
func (t *cddTopics) Version() int64  { return t.version }

// cddHarness drives one Manager's consumer groups from a datadriven file.
// Writes succeed at once; every record is kept so that "reload" can replay
// them into a fresh Manager.
type cddHarness struct {
	t      testing.TB
	cfg    Config
	now    time.Time
	mgr    *Manager
	topics *cddTopics
	// names remembers every topic id ever made, deleted ones too.
	names  map[kafka.UUID]string
	nextID byte
	log    []Record
	shown  int // log records already printed by "records"
	out    *strings.Builder
}

func newCDDHarness(t testing.TB) *cddHarness {
	h := &cddHarness{
		t: t, now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		topics: &cddTopics{byName: map[string]TopicInfo{}, version: 1},
		names:  map[kafka.UUID]string{}, out: &strings.Builder{},
	}
	h.cfg = DefaultConfig()
	h.cfg.Topics = func() Topics { return h.topics }
	ids := 0
	h.cfg.NewMemberID = func(prefix string) string {
		ids++
		if prefix == "" {
			prefix = "classic" // a classic member joining a consumer group
		}
		return fmt.Sprintf("%s-id%d", prefix, ids)
	}
	h.mgr = NewManager(h.cfg, h.now)
	return h
}

func TestConsumerDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata/consumer", func(t *testing.T, path string) {
		h := newCDDHarness(t)
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			h.out = &strings.Builder{}
			h.run(td)
			if h.out.Len() == 0 {
				return "ok\n"
			}
			return h.out.String()
		})
	})
}

func (h *cddHarness) printf(format string, args ...any) { fmt.Fprintf(h.out, format, args...) }

func (h *cddHarness) run(td *datadriven.TestData) {
	switch td.Cmd {
	case "config":
		h.config(td)
	case "topics":
		h.changeTopics(td)
	case "heartbeat":
		h.heartbeat(td, h.heartbeatRequest(td))
	case "leave":
		req := ConsumerHeartbeatRequest{GroupID: cddStr(td, "group", "g"), MemberID: cddStr(td, "member", ""),
			MemberEpoch: leaveGroupMemberEpoch, InstanceID: cddOptStr(td, "instance"), RebalanceTimeoutMs: -1}
		if td.HasArg("static") {
			req.MemberEpoch = leaveGroupStaticMemberEpoch
		}
		h.heartbeat(td, req)
	case "tick":
		h.tick(td)
	case "describe":
		h.printf("%s", h.dump(h.mgr, cddStr(td, "group", "g"), td.HasArg("epochs")))
	case "commit":
		h.commit(td)
	case "fetch-check":
		member := cddOptStr(td, "member")
		code := h.mgr.ValidateOffsetFetch(cddStr(td, "group", "g"), member, int32(cddNum(h.t, td, "epoch", -1)))
		h.printf("%s\n", cddErrName(code))
	case "classic-join":
		h.classicJoin(td)
	case "cjoin":
		h.consumerJoin(td)
	case "csync":
		h.consumerSync(td)
	case "cheartbeat":
		h.classicHeartbeat(td)
	case "cleave":
		h.classicLeave(td)
	case "cstate":
		h.classicState(td)
	case "records":
		for _, r := range h.log[h.shown:] {
			h.printf("%s\n", h.describeRecord(r))
		}
		h.shown = len(h.log)
	case "reload":
		h.reload(td)
	default:
		td.Fatalf(h.t, "unknown command %q", td.Cmd)
	}
}

// config replaces the Manager with one of the given settings (only at the
// start of a file: the log is dropped).
func (h *cddHarness) config(td *datadriven.TestData) {
	if td.HasArg("session-timeout") {
		h.cfg.ConsumerSessionTimeout = cddDur(h.t, td, "session-timeout")
	}
	if td.HasArg("max-size") {
		h.cfg.ConsumerMaxSize = int(cddNum(h.t, td, "max-size", 0))
	}
	h.mgr = NewManager(h.cfg, h.now)
	h.log, h.shown = nil, 0
}

// changeTopics applies "create NAME partitions=N", "grow NAME partitions=N"
// and "delete NAME" lines as one new topics version.
func (h *cddHarness) changeTopics(td *datadriven.TestData) {
	next := &cddTopics{byName: maps.Clone(h.topics.byName), version: h.topics.version + 1}
	for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			td.Fatalf(h.t, "bad topics line %q", line)
		}
		parts := int32(0)
		if len(f) > 2 {
			n, err := strconv.Atoi(strings.TrimPrefix(f[2], "partitions="))
			if err != nil {
				td.Fatalf(h.t, "bad topics line %q: %v", line, err)
			}
			parts = int32(n)
		}
		switch f[0] {
		case "create":
			h.nextID++
			id := kafka.UUID{15: h.nextID}
			h.names[id] = f[1]
			next.byName[f[1]] = TopicInfo{ID: id, Name: f[1], Partitions: parts}
		case "grow":
			ti := next.byName[f[1]]
			ti.Partitions = parts
			next.byName[f[1]] = ti
		case "delete":
			delete(next.byName, f[1])
		default:
			td.Fatalf(h.t, "bad topics line %q", line)
		}
	}
	h.topics = next
	h.printf("version %d:", next.version)
	for _, n := range next.Names() {
		h.printf(" %s/%d", n, next.byName[n].Partitions)
	}
	h.printf("\n")
}

// heartbeatRequest reads a heartbeat's arguments. A join (epoch=0) gets
// a rebalance timeout and an empty owned list unless given; other
// heartbeats leave absent fields nil (unchanged), as a keep-alive does.
func (h *cddHarness) heartbeatRequest(td *datadriven.TestData) ConsumerHeartbeatRequest {
	epoch := int32(cddNum(h.t, td, "epoch", 0))
	req := ConsumerHeartbeatRequest{
		GroupID: cddStr(td, "group", "g"), MemberID: cddStr(td, "member", ""), MemberEpoch: epoch,
		InstanceID: cddOptStr(td, "instance"), RackID: cddOptStr(td, "rack"),
		RebalanceTimeoutMs:   -1,
		SubscribedTopicRegex: cddOptStr(td, "regex"), ServerAssignor: cddOptStr(td, "assignor"),
	}
	if epoch == 0 {
		req.RebalanceTimeoutMs = 60000
		req.Owned = []TopicPartitions{}
	}
	if td.HasArg("rebalance-timeout") {
		req.RebalanceTimeoutMs = int32(cddNum(h.t, td, "rebalance-timeout", 0))
	}
	if s := cddOptStr(td, "topics"); s != nil {
		req.SubscribedTopicNames = []string{}
		if *s != "" {
			req.SubscribedTopicNames = strings.Split(*s, ",")
		}
	}
	if s := cddOptStr(td, "owned"); s != nil {
		req.Owned = h.parsePartitions(td, *s)
	}
	if td.HasArg("no-owned") {
		req.Owned = nil
	}
	return req
}

// parsePartitions reads "t1:0,1;t2:3" (topics by name; "" is none).
func (h *cddHarness) parsePartitions(td *datadriven.TestData, s string) []TopicPartitions {
	out := []TopicPartitions{}
	if s == "" {
		return out
	}
	for _, tp := range strings.Split(s, ";") {
		name, ps, _ := strings.Cut(tp, ":")
		id, ok := h.idOf(name)
		if !ok {
			td.Fatalf(h.t, "unknown topic %q", name)
		}
		var parts []int32
		for _, p := range strings.Split(ps, ",") {
			n, err := strconv.Atoi(p)
			if err != nil {
				td.Fatalf(h.t, "bad partition %q", p)
			}
			parts = append(parts, int32(n))
		}
		out = append(out, TopicPartitions{TopicID: id, Partitions: parts})
	}
	return out
}

// idOf finds a topic's id, deleted topics too.
func (h *cddHarness) idOf(name string) (kafka.UUID, bool) {
	for id, n := range h.names {
		if n == name {
			if ti, ok := h.topics.byName[name]; ok {
				return ti.ID, true
			}
			return id, true
		}
	}
	return kafka.UUID{}, false
}

// heartbeat validates the request as the API layer does (unless
// "novalidate"), sends it and completes its writes.
func (h *cddHarness) heartbeat(td *datadriven.TestData, req ConsumerHeartbeatRequest) {
	if !td.HasArg("novalidate") {
		if code, msg := h.cfg.ValidateConsumerHeartbeat(req, int16(cddNum(h.t, td, "version", 1))); code != 0 {
			h.printf("%s %q\n", cddErrName(code), msg)
			return
		}
	}
	var res *ConsumerHeartbeatResult
	h.mgr.ConsumerHeartbeat(h.now, req, func(r ConsumerHeartbeatResult) { res = &r })
	h.settle()
	if res == nil {
		td.Fatalf(h.t, "heartbeat not answered after its writes")
	}
	if td.HasArg("code-only") {
		res.ErrorMessage = nil
	}
	h.printf("%s", h.formatResult(*res))
}

func (h *cddHarness) formatResult(r ConsumerHeartbeatResult) string {
	if r.ErrorCode != 0 && r.ErrorMessage == nil {
		return fmt.Sprintf("%s: %s epoch=%d\n", r.MemberID, cddErrName(r.ErrorCode), r.MemberEpoch)
	}
	if r.ErrorCode != 0 {
		return fmt.Sprintf("%s: %s epoch=%d %q\n", r.MemberID, cddErrName(r.ErrorCode), r.MemberEpoch, cddDeref(r.ErrorMessage))
	}
	s := fmt.Sprintf("%s: epoch=%d", r.MemberID, r.MemberEpoch)
	if r.Assignment == nil {
		return s + " no assignment\n"
	}
	return s + " assignment=" + h.formatTPs(r.Assignment) + "\n"
}

// settle completes every write at once, keeping its records.
func (h *cddHarness) settle() {
	for range 100 {
		writes := h.mgr.TakeWrites()
		if len(writes) == 0 {
			return
		}
		for _, w := range writes {
			h.log = append(h.log, w.Records...)
			if w.Done != nil {
				w.Done(nil)
			}
		}
	}
	h.t.Fatal("writes did not settle")
}

// tick moves the clock and fires the timers, printing the members gone.
func (h *cddHarness) tick(td *datadriven.TestData) {
	before := h.allMembers()
	h.now = h.now.Add(cddDur(h.t, td, "advance"))
	h.mgr.Tick(h.now)
	h.settle()
	after := h.allMembers()
	var gone []string
	for _, m := range before {
		if !slices.Contains(after, m) {
			gone = append(gone, m)
		}
	}
	if len(gone) > 0 {
		h.printf("fenced: %s\n", strings.Join(gone, " "))
	}
}

func (h *cddHarness) allMembers() []string {
	var out []string
	for _, id := range h.mgr.GroupIDs() {
		if g := h.mgr.groups[id]; g.cg != nil {
			for _, mid := range g.cg.memberIDs() {
				out = append(out, id+"/"+mid)
			}
		}
	}
	return out
}

// commit sends an OffsetCommit of offset 1 for each partition of parts.
func (h *cddHarness) commit(td *datadriven.TestData) {
	req := CommitRequest{
		GroupID: cddStr(td, "group", "g"), MemberID: cddStr(td, "member", ""), InstanceID: cddOptStr(td, "instance"),
		GenerationID: int32(cddNum(h.t, td, "epoch", -1)), Version: int16(cddNum(h.t, td, "version", 9)),
		GroupNotFoundCode: kerr.GroupIDNotFound.Code,
	}
	var names []string
	for _, tp := range strings.Split(cddStr(td, "parts", ""), ";") {
		name, ps, _ := strings.Cut(tp, ":")
		for _, p := range strings.Split(ps, ",") {
			n, _ := strconv.Atoi(p)
			req.Partitions = append(req.Partitions, CommitPartition{TP: kafka.TopicPartition{Topic: name, Partition: int32(n)}, Offset: 1})
			names = append(names, fmt.Sprintf("%s:%d", name, n))
		}
	}
	var res *CommitResult
	h.mgr.CommitOffsets(h.now, req, func(r CommitResult) { res = &r })
	h.settle()
	if res == nil {
		td.Fatalf(h.t, "commit not answered")
	}
	for i, code := range res.Errors {
		h.printf("%s=%s ", names[i], cddErrName(code))
	}
	h.printf("\n")
}

// classicJoin adds a member to a classic group (a protocol type that is
// not "consumer", so no migration applies).
func (h *cddHarness) classicJoin(td *datadriven.TestData) {
	req := JoinRequest{
		GroupID: cddStr(td, "group", "g"), ClientID: "classic", SessionTimeout: 10 * time.Second,
		RebalanceTimeout: 30 * time.Second, ProtocolType: "connect", Protocols: []Protocol{{Name: "p"}},
	}
	h.mgr.Join(h.now, req, func(JoinResult) {})
	h.settle()
	g, _ := h.mgr.Group(req.GroupID)
	h.printf("classic group %s: %s, %d members\n", req.GroupID, g.state, len(g.members))
}

// reload replays the whole log into a fresh Manager and checks that it
// holds every consumer group as the live one does; the fresh one then
// carries on.
func (h *cddHarness) reload(td *datadriven.TestData) {
	fresh := h.replayed()
	for _, id := range h.mgr.GroupIDs() {
		if h.mgr.groups[id].cg == nil {
			continue
		}
		live, loaded := h.dump(h.mgr, id, true), h.dump(fresh, id, true)
		if live != loaded {
			td.Fatalf(h.t, "reload of group %s differs:\nlive:\n%s\nreloaded:\n%s", id, live, loaded)
		}
		h.printf("%s", loaded)
	}
	h.mgr = fresh
}

func (h *cddHarness) replayed() *Manager {
	fresh := NewManager(h.cfg, h.now)
	for i, r := range h.log {
		if err := fresh.Replay(h.now, int64(i), kafka.NoProducerID, r.Key, r.Value); err != nil {
			h.t.Fatalf("replaying record %d: %v", i, err)
		}
	}
	fresh.FinishLoad(h.now)
	return fresh
}

// dump prints a consumer group: its epochs and state, its regexes, then
// each member's epochs, state, subscription, current assignment (with the
// partitions' assignment epochs when epochs is set), pending revocations
// and target.
func (h *cddHarness) dump(m *Manager, id string, epochs bool) string {
	var b strings.Builder
	d := m.DescribeConsumerGroup(id)
	if d.ErrorCode != 0 {
		return fmt.Sprintf("group %s: %s %q\n", id, cddErrName(d.ErrorCode), cddDeref(d.ErrorMessage))
	}
	cg := m.groups[id].cg
	fmt.Fprintf(&b, "group %s: %s epoch=%d assignment-epoch=%d assignor=%s\n", id, d.State, d.GroupEpoch, d.AssignmentEpoch, d.AssignorName)
	for _, re := range slices.Sorted(maps.Keys(cg.regexes)) {
		fmt.Fprintf(&b, "  regex %q: [%s]\n", re, strings.Join(cg.regexes[re].topics, " "))
	}
	for _, md := range d.Members {
		mem := cg.members[md.MemberID]
		fmt.Fprintf(&b, "  %s: epoch=%d prev=%d %s", mem.id, mem.epoch, mem.prevEpoch, cddStateName(mem.state))
		if mem.instanceID != nil {
			fmt.Fprintf(&b, " instance=%s", *mem.instanceID)
		}
		if mem.serverAssignor != nil {
			fmt.Fprintf(&b, " assignor=%s", *mem.serverAssignor)
		}
		fmt.Fprintf(&b, " topics=%s", strings.Join(mem.subscribedNames, ","))
		if mem.regex != "" {
			fmt.Fprintf(&b, " regex=%s", mem.regex)
		}
		fmt.Fprintf(&b, "\n    assigned=%s pending=%s target=%s\n", h.formatEpochs(mem.assigned, epochs),
			h.formatEpochs(mem.pendingRevocation, epochs), h.formatTPs(assignmentPartitions(cg.target[mem.id])))
	}
	return b.String()
}

func cddStateName(s memberState) string {
	switch s {
	case memberStable:
		return "STABLE"
	case memberUnrevokedPartitions:
		return "UNREVOKED_PARTITIONS"
	case memberUnreleasedPartitions:
		return "UNRELEASED_PARTITIONS"
	}
	return fmt.Sprintf("UNKNOWN(%d)", s)
}

// formatTPs prints partitions as "t1:0,1;t2:3" by topic name ("-" if none).
func (h *cddHarness) formatTPs(tps []TopicPartitions) string {
	var parts []string
	for _, tp := range tps {
		if len(tp.Partitions) == 0 {
			continue
		}
		ps := make([]string, len(tp.Partitions))
		for i, p := range slices.Sorted(slices.Values(tp.Partitions)) {
			ps[i] = strconv.Itoa(int(p))
		}
		parts = append(parts, h.topicName(tp.TopicID)+":"+strings.Join(ps, ","))
	}
	slices.Sort(parts)
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ";")
}

// formatEpochs is formatTPs of a current assignment, each partition with
// "@epoch" when epochs is set.
func (h *cddHarness) formatEpochs(p partitionEpochs, epochs bool) string {
	if !epochs {
		return h.formatTPs(p.topicPartitions())
	}
	var parts []string
	for _, tp := range p.topicPartitions() {
		ps := make([]string, len(tp.Partitions))
		for i, part := range tp.Partitions {
			ps[i] = fmt.Sprintf("%d@%d", part, p[tp.TopicID][part])
		}
		parts = append(parts, h.topicName(tp.TopicID)+":"+strings.Join(ps, ","))
	}
	slices.Sort(parts)
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ";")
}

func (h *cddHarness) topicName(id kafka.UUID) string {
	n, ok := h.names[id]
	if !ok {
		return id.String()
	}
	if _, live := h.topics.byName[n]; !live || h.topics.byName[n].ID != id {
		return n + "(deleted)"
	}
	return n
}

// describeRecord decodes a consumer group record into one short line.
func (h *cddHarness) describeRecord(r Record) string {
	switch typ, _ := cr.RecordType(r.Key); typ {
	case 0, 1:
		var k kmsg.OffsetCommitKey
		if err := k.ReadFrom(r.Key); err != nil {
			return "undecodable offset key: " + err.Error()
		}
		if r.Value == nil {
			return fmt.Sprintf("OffsetCommit %s %s:%d tombstone", k.Group, k.Topic, k.Partition)
		}
		return fmt.Sprintf("OffsetCommit %s %s:%d", k.Group, k.Topic, k.Partition)
	case 2:
		var k kmsg.GroupMetadataKey
		if err := k.ReadFrom(r.Key); err != nil {
			return "undecodable group key: " + err.Error()
		}
		if r.Value == nil {
			return "ClassicGroupMetadata " + k.Group + " tombstone"
		}
		return "ClassicGroupMetadata " + k.Group
	}
	k, v, err := cr.Decode(r.Key, r.Value)
	if err != nil {
		return "undecodable: " + err.Error()
	}
	tomb := func(s string) string {
		if v == nil {
			return s + " tombstone"
		}
		return s
	}
	switch k := k.(type) {
	case *cr.ConsumerGroupMetadataKey:
		if v == nil {
			return tomb("GroupMetadata " + k.GroupID)
		}
		return fmt.Sprintf("GroupMetadata %s: epoch=%d", k.GroupID, v.(*cr.ConsumerGroupMetadataValue).Epoch)
	case *cr.ConsumerGroupPartitionMetadataKey:
		return tomb("PartitionMetadata " + k.GroupID)
	case *cr.ConsumerGroupMemberMetadataKey:
		if v == nil {
			return tomb("MemberMetadata " + k.GroupID + "/" + k.MemberID)
		}
		val := v.(*cr.ConsumerGroupMemberMetadataValue)
		s := fmt.Sprintf("MemberMetadata %s/%s: topics=%s rebalance-timeout=%d", k.GroupID, k.MemberID, strings.Join(val.SubscribedTopicNames, ","), val.RebalanceTimeoutMs)
		for _, f := range []struct {
			name string
			v    *string
		}{{"regex", val.SubscribedTopicRegex}, {"assignor", val.ServerAssignor}, {"instance", val.InstanceID}, {"rack", val.RackID}} {
			if f.v != nil {
				s += fmt.Sprintf(" %s=%s", f.name, *f.v)
			}
		}
		return s
	case *cr.ConsumerGroupTargetAssignmentMetadataKey:
		if v == nil {
			return tomb("TargetAssignmentMetadata " + k.GroupID)
		}
		return fmt.Sprintf("TargetAssignmentMetadata %s: epoch=%d", k.GroupID, v.(*cr.ConsumerGroupTargetAssignmentMetadataValue).AssignmentEpoch)
	case *cr.ConsumerGroupTargetAssignmentMemberKey:
		if v == nil {
			return tomb("TargetAssignmentMember " + k.GroupID + "/" + k.MemberID)
		}
		var tps []TopicPartitions
		for _, tp := range v.(*cr.ConsumerGroupTargetAssignmentMemberValue).TopicPartitions {
			tps = append(tps, TopicPartitions{TopicID: tp.TopicID, Partitions: tp.Partitions})
		}
		return fmt.Sprintf("TargetAssignmentMember %s/%s: %s", k.GroupID, k.MemberID, h.formatTPs(tps))
	case *cr.ConsumerGroupCurrentMemberAssignmentKey:
		if v == nil {
			return tomb("CurrentMemberAssignment " + k.GroupID + "/" + k.MemberID)
		}
		val := v.(*cr.ConsumerGroupCurrentMemberAssignmentValue)
		return fmt.Sprintf("CurrentMemberAssignment %s/%s: epoch=%d prev=%d %s assigned=%s pending=%s", k.GroupID, k.MemberID,
			val.MemberEpoch, val.PreviousMemberEpoch, cddStateName(memberState(val.State)),
			h.formatEpochs(fromRecordPartitions(val.AssignedPartitions, val.MemberEpoch), true),
			h.formatEpochs(fromRecordPartitions(val.PartitionsPendingRevocation, val.MemberEpoch), true))
	case *cr.ConsumerGroupRegularExpressionKey:
		if v == nil {
			return tomb(fmt.Sprintf("RegularExpression %s/%q", k.GroupID, k.RegularExpression))
		}
		val := v.(*cr.ConsumerGroupRegularExpressionValue)
		return fmt.Sprintf("RegularExpression %s/%q: [%s] version=%d", k.GroupID, k.RegularExpression, strings.Join(val.Topics, " "), val.Version)
	}
	return fmt.Sprintf("record of type %d", k.RecordType())
}

func cddErrName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	if e, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		return e.Message
	}
	return fmt.Sprintf("ERROR(%d)", code)
}

func cddDeref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func cddStr(td *datadriven.TestData, key, def string) string {
	if s := cddOptStr(td, key); s != nil {
		return *s
	}
	return def
}

func cddOptStr(td *datadriven.TestData, key string) *string {
	for _, a := range td.CmdArgs {
		if a.Key == key {
			// "%20" is a blank, which datadriven's arguments cannot hold.
			s := strings.ReplaceAll(strings.Join(a.Vals, ","), "%20", " ")
			return &s
		}
	}
	return nil
}

func cddNum(t testing.TB, td *datadriven.TestData, key string, def int64) int64 {
	s := cddOptStr(td, key)
	if s == nil {
		return def
	}
	n, err := strconv.ParseInt(*s, 10, 64)
	if err != nil {
		td.Fatalf(t, "bad %s: %v", key, err)
	}
	return n
}

func cddDur(t testing.TB, td *datadriven.TestData, key string) time.Duration {
	d, err := time.ParseDuration(cddStr(td, key, "0s"))
	if err != nil {
		td.Fatalf(t, "bad %s: %v", key, err)
	}
	return d
}
