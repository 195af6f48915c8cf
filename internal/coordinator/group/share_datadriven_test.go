package group

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	cr "github.com/sluice-io/sluice/internal/coordinator/group/consumerrec"
	"github.com/sluice-io/sluice/internal/kafka"
)

// sddHarness drives a Manager's share groups from testdata/share files,
// on the consumer groups' harness (topics, clock, log of records).
type sddHarness struct {
	*cddHarness
	// pending are the share state initializations heartbeats asked for,
	// in order, until "init" completes them.
	pending []*ShareStateRequest
}

func TestShareDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata/share", func(t *testing.T, path string) {
		h := &sddHarness{cddHarness: newCDDHarness(t)}
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			h.out = &strings.Builder{}
			h.runShare(td)
			if h.out.Len() == 0 {
				return "ok\n"
			}
			return h.out.String()
		})
	})
}

func (h *sddHarness) runShare(td *datadriven.TestData) {
	switch td.Cmd {
	case "config":
		h.cfg.Share = ShareConfig{
			SessionTimeout: cddDur(h.t, td, "session"), HeartbeatInterval: cddDur(h.t, td, "interval"),
			MaxSize: int(cddNum(h.t, td, "max-size", 0)), InitializeRetryInterval: cddDur(h.t, td, "retry"),
			AssignmentInterval: cddDur(h.t, td, "assign-interval"),
		}
		h.mgr = NewManager(h.cfg, h.now)
	case "topics":
		h.changeTopics(td)
	case "heartbeat":
		h.shareHeartbeat(td)
	case "tick":
		h.shareTick(td)
	case "init":
		h.completeInit(td)
	case "describe":
		h.printf("%s", h.dumpShare(h.mgr, cddStr(td, "group", "g")))
	case "list":
		for _, l := range h.mgr.List() {
			h.printf("%s protocol=%s state=%s type=%s\n", l.GroupID, l.ProtocolType, l.State, l.Type)
		}
	case "delete":
		h.deleteShare(td)
	case "records":
		for _, r := range h.log[h.shown:] {
			h.printf("%s\n", describeShareRecord(r, h.describeRecord))
		}
		h.shown = len(h.log)
	case "reload":
		h.reloadShare(td)
	case "other":
		h.otherTypes(td)
	default:
		td.Fatalf(h.t, "unknown command %q", td.Cmd)
	}
}

// shareHeartbeat sends one heartbeat: member, epoch (-1 leaves), topics
// (a comma list; absent means unchanged), rack, client.
func (h *sddHarness) shareHeartbeat(td *datadriven.TestData) {
	req := ShareHeartbeatRequest{
		GroupID: cddStr(td, "group", "g"), MemberID: cddStr(td, "member", ""), MemberEpoch: int32(cddNum(h.t, td, "epoch", 0)),
		RackID: cddOptStr(td, "rack"), ClientID: cddStr(td, "client", "client"), ClientHost: "/127.0.0.1",
	}
	if s := cddOptStr(td, "topics"); s != nil {
		req.SubscribedTopicNames = []string{}
		if *s != "" {
			req.SubscribedTopicNames = strings.Split(*s, ",")
		}
	}
	if code, msg := ValidateShareHeartbeat(req); code != 0 {
		h.printf("error %s: %s\n", cddErrName(code), msg)
		return
	}
	var got *ShareHeartbeatResult
	h.mgr.ShareHeartbeat(h.now, req, func(r ShareHeartbeatResult) { got = &r })
	h.settle()
	if got == nil {
		h.t.Fatal("heartbeat not answered")
	}
	if got.ErrorCode != 0 {
		h.printf("error %s: %s\n", cddErrName(got.ErrorCode), cddDeref(got.ErrorMessage))
		return
	}
	h.printf("member=%s epoch=%d interval=%s", got.MemberID, got.MemberEpoch, got.HeartbeatInterval)
	if got.Assignment != nil {
		h.printf(" assignment=%s", h.formatTPs(got.Assignment))
	}
	h.printf("\n")
	if got.Initialize != nil {
		h.printf("initialize %s\n", h.formatState(got.Initialize))
		h.pending = append(h.pending, got.Initialize)
	}
}

func (h *sddHarness) formatState(r *ShareStateRequest) string {
	var parts []string
	for _, t := range r.Topics {
		at := ""
		if t.StartAtZero {
			at = "@0" // new partitions of a topic the group has start at offset 0
		}
		parts = append(parts, fmt.Sprintf("%s:%v%s", t.TopicName, t.Partitions, at))
	}
	return fmt.Sprintf("%s epoch=%d %s", r.GroupID, r.GroupEpoch, strings.Join(parts, " "))
}

// completeInit answers the oldest pending initialization: done, or
// "fail" (the persister's error).
func (h *sddHarness) completeInit(td *datadriven.TestData) {
	if len(h.pending) == 0 {
		td.Fatalf(h.t, "no initialization pending")
	}
	r := h.pending[0]
	h.pending = h.pending[1:]
	done := false
	if td.HasArg("fail") {
		h.mgr.ShareStateUninitialized(h.now, r.GroupID, r.Topics, func(error) { done = true })
	} else {
		h.mgr.ShareStateInitialized(h.now, r.GroupID, r.Topics, func(error) { done = true })
	}
	h.settle()
	if !done {
		h.t.Fatal("initialization not acknowledged")
	}
}

func (h *sddHarness) shareTick(td *datadriven.TestData) {
	before := h.shareMembers(h.mgr)
	h.now = h.now.Add(cddDur(h.t, td, "advance"))
	h.mgr.Tick(h.now)
	h.settle()
	after := h.shareMembers(h.mgr)
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

func (h *sddHarness) shareMembers(m *Manager) []string {
	var out []string
	for _, gid := range sortedShareIDs(m.share) {
		for _, mid := range m.share[gid].memberIDs() {
			out = append(out, gid+"/"+mid)
		}
	}
	return out
}

// dumpShare prints DescribeShareGroup's answer and the share state.
func (h *sddHarness) dumpShare(m *Manager, id string) string {
	d := m.DescribeShareGroup(id)
	var b strings.Builder
	if d.ErrorCode != 0 {
		fmt.Fprintf(&b, "error %s: %s\n", cddErrName(d.ErrorCode), cddDeref(d.ErrorMessage))
		return b.String()
	}
	fmt.Fprintf(&b, "group %s state=%s epoch=%d assignment-epoch=%d assignor=%s\n", d.GroupID, d.State, d.GroupEpoch, d.AssignmentEpoch, d.AssignorName)
	for _, md := range d.Members {
		fmt.Fprintf(&b, "  %s epoch=%d client=%s rack=%s topics=%s assigned=", md.MemberID, md.MemberEpoch, md.ClientID, cddDeref(md.RackID), strings.Join(md.SubscribedTopicNames, ","))
		var ps []string
		for _, p := range md.Assignment {
			ps = append(ps, fmt.Sprintf("%s%v", p.TopicName, p.Partitions))
		}
		fmt.Fprintf(&b, "%s\n", strings.Join(ps, " "))
	}
	if s := m.share[id].state; s != nil {
		fmt.Fprintf(&b, "  state: initializing=%s initialized=%s deleting=%d\n", formatInit(s.initializing), formatInit(s.initialized), len(s.deleting))
	}
	return b.String()
}

func formatInit(m map[kafka.UUID]shareInitTopic) string {
	var parts []string
	for _, t := range stateTopics(m) {
		parts = append(parts, fmt.Sprintf("%s%v", t.TopicName, t.Partitions))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// reloadShare replays the log into a fresh Manager and checks that every
// share group reads back as it was live.
func (h *sddHarness) reloadShare(td *datadriven.TestData) {
	fresh := h.replayed()
	for _, id := range sortedShareIDs(h.mgr.share) {
		live, loaded := h.dumpShare(h.mgr, id), h.dumpShare(fresh, id)
		if live != loaded {
			td.Fatalf(h.t, "reload of share group %s differs:\nlive:\n%s\nreloaded:\n%s", id, live, loaded)
		}
		h.printf("%s", loaded)
	}
	if len(fresh.share) != len(h.mgr.share) {
		td.Fatalf(h.t, "reload: %d share groups, live %d", len(fresh.share), len(h.mgr.share))
	}
	h.mgr = fresh
}

// deleteShare runs DeleteGroups' two steps: the state to delete, then the
// group's tombstones.
func (h *sddHarness) deleteShare(td *datadriven.TestData) {
	id := cddStr(td, "group", "g")
	var req *ShareStateRequest
	code := int16(-1)
	h.mgr.PrepareShareDelete(h.now, id, func(r *ShareStateRequest, c int16) { req, code = r, c })
	h.settle()
	if code != 0 {
		h.printf("prepare: %s\n", cddErrName(code))
		return
	}
	if req != nil {
		h.printf("delete state %s\n", h.formatState(req))
	}
	h.mgr.Delete(h.now, id, func(c int16) { code = c })
	h.settle()
	h.printf("delete: %s\n", cddErrName(code))
}

// otherTypes sends the other protocols' requests to a group id: kind is
// consumer (a ConsumerGroupHeartbeat join), classic (a JoinGroup),
// commit (an OffsetCommit) or describe (DescribeGroups and
// ConsumerGroupDescribe).
func (h *sddHarness) otherTypes(td *datadriven.TestData) {
	id := cddStr(td, "group", "g")
	switch kind := cddStr(td, "kind", ""); kind {
	case "consumer":
		var res ConsumerHeartbeatResult
		h.mgr.ConsumerHeartbeat(h.now, ConsumerHeartbeatRequest{GroupID: id, MemberID: "c1", RebalanceTimeoutMs: 1000, SubscribedTopicNames: []string{"a"}, Owned: []TopicPartitions{}}, func(r ConsumerHeartbeatResult) { res = r })
		h.settle()
		h.printf("consumer heartbeat: %s %s\n", cddErrName(res.ErrorCode), cddDeref(res.ErrorMessage))
	case "classic":
		var res JoinResult
		h.mgr.Join(h.now, JoinRequest{GroupID: id, SessionTimeout: h.cfg.MinSessionTimeout, RebalanceTimeout: h.cfg.MinSessionTimeout,
			ProtocolType: "consumer", Protocols: []Protocol{{Name: "range"}}}, func(r JoinResult) { res = r })
		h.settle()
		h.printf("join: %s\n", cddErrName(res.ErrorCode))
	case "commit":
		var res CommitResult
		h.mgr.CommitOffsets(h.now, CommitRequest{GroupID: id, GenerationID: -1, Partitions: []CommitPartition{{TP: kafka.TopicPartition{Topic: "a"}, Offset: 1}}}, func(r CommitResult) { res = r })
		h.settle()
		h.printf("commit: %s\n", cddErrName(res.Errors[0]))
	case "describe":
		d := h.mgr.Describe(id)
		h.printf("describe groups: %s state=%s\n", cddErrName(d.ErrorCode), d.State)
		cd := h.mgr.DescribeConsumerGroup(id)
		h.printf("consumer group describe: %s %s\n", cddErrName(cd.ErrorCode), cddDeref(cd.ErrorMessage))
	default:
		td.Fatalf(h.t, "unknown kind %q", kind)
	}
}

// describeShareRecord prints a share record, or hands others to the
// consumer harness's printer.
func describeShareRecord(r Record, other func(Record) string) string {
	typ, _ := cr.RecordType(r.Key)
	if !cr.IsShareRecordType(typ) {
		return other(r)
	}
	k, v, err := cr.DecodeShare(r.Key, r.Value)
	if err != nil {
		return "undecodable share record: " + err.Error()
	}
	name := map[int16]string{10: "ShareMember", 11: "ShareGroup", 12: "ShareTargetMeta", 13: "ShareTarget", 14: "ShareCurrent", 15: "ShareState"}[typ]
	var who string
	switch k := k.(type) {
	case *cr.ShareGroupKey:
		who = k.GroupID
	case *cr.ShareMemberKey:
		who = k.GroupID + "/" + k.MemberID
	}
	if v == nil {
		return fmt.Sprintf("%s %s tombstone", name, who)
	}
	switch v := v.(type) {
	case *cr.ShareGroupMetadataValue:
		return fmt.Sprintf("%s %s epoch=%d", name, who, v.Epoch)
	case *cr.ShareGroupMemberMetadataValue:
		return fmt.Sprintf("%s %s topics=%s client=%s", name, who, strings.Join(v.SubscribedTopicNames, ","), v.ClientID)
	case *cr.ShareGroupTargetAssignmentMetadataValue:
		return fmt.Sprintf("%s %s epoch=%d", name, who, v.AssignmentEpoch)
	case *cr.ShareGroupTargetAssignmentMemberValue:
		return fmt.Sprintf("%s %s %s", name, who, formatRecordTPs(v.TopicPartitions))
	case *cr.ShareGroupCurrentMemberAssignmentValue:
		return fmt.Sprintf("%s %s epoch=%d prev=%d %s", name, who, v.MemberEpoch, v.PreviousMemberEpoch, formatRecordTPs(v.AssignedPartitions))
	case *cr.ShareGroupStatePartitionMetadataValue:
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s initializing=[", name, who)
		for _, t := range v.InitializingTopics {
			fmt.Fprintf(&b, "%s%v", t.TopicName, t.Partitions)
		}
		b.WriteString("] initialized=[")
		for _, t := range v.InitializedTopics {
			fmt.Fprintf(&b, "%s%v", t.TopicName, t.Partitions)
		}
		b.WriteString("] deleting=[")
		for _, t := range v.DeletingTopics {
			b.WriteString(t.TopicName)
		}
		return b.String() + "]"
	}
	return "?"
}

func formatRecordTPs(tps []cr.TopicPartition) string {
	var parts []string
	for _, tp := range tps {
		parts = append(parts, fmt.Sprintf("%d%v", tp.TopicID[15], tp.Partitions))
	}
	return "[" + strings.Join(parts, " ") + "]"
}
