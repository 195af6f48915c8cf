package group

import (
	"fmt"
	"strings"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The classic-protocol commands of the consumer-group datadriven tests: a
// consumer (embedded protocol "consumer") member's JoinGroup, SyncGroup,
// Heartbeat and LeaveGroup, for the online migration between protocols.

// consumerJoin sends "cjoin group= member= topics=t1,t2 owned=t1:0;t2:1
// [instance=] [unknown]": a JoinGroup v9 with a ConsumerProtocol v3
// subscription. "unknown" joins with an empty member id (the first join).
func (h *cddHarness) consumerJoin(td *datadriven.TestData) {
	sub := kmsg.ConsumerMemberMetadata{Version: 3, Generation: -1}
	if s := cddOptStr(td, "topics"); s != nil && *s != "" {
		sub.Topics = strings.Split(*s, ",")
	}
	if s := cddOptStr(td, "owned"); s != nil && *s != "" {
		for _, tp := range strings.Split(*s, ";") {
			name, ps, _ := strings.Cut(tp, ":")
			o := kmsg.ConsumerMemberMetadataOwnedPartition{Topic: name}
			for _, p := range strings.Split(ps, ",") {
				var n int32
				fmt.Sscan(p, &n)
				o.Partitions = append(o.Partitions, n)
			}
			sub.OwnedPartitions = append(sub.OwnedPartitions, o)
		}
	}
	req := JoinRequest{
		GroupID: cddStr(td, "group", "g"), MemberID: cddStr(td, "member", ""), InstanceID: cddOptStr(td, "instance"),
		ClientID: "classic", ClientHost: "/127.0.0.1", SessionTimeout: 10 * time.Second, RebalanceTimeout: 30 * time.Second,
		ProtocolType: "consumer", Protocols: []Protocol{{Name: "range", Metadata: sub.AppendTo(nil)}},
		RequireKnownMemberID: true,
	}
	if td.HasArg("unknown") {
		req.MemberID = ""
	}
	var res *JoinResult
	h.mgr.Join(h.now, req, func(r JoinResult) { res = &r })
	h.settle()
	if res == nil {
		h.printf("join waits\n")
		return
	}
	if res.ErrorCode != 0 {
		h.printf("%s: %s generation=%d\n", res.MemberID, cddErrName(res.ErrorCode), res.GenerationID)
		return
	}
	h.printf("%s: generation=%d protocol=%s/%s leader=%q\n", res.MemberID, res.GenerationID, cddDeref(res.ProtocolType), cddDeref(res.ProtocolName), res.LeaderID)
}

// consumerSync sends "csync group= member= generation=" and prints the
// assignment it gets; a leader's input is its assignment.
func (h *cddHarness) consumerSync(td *datadriven.TestData) {
	req := SyncRequest{GroupID: cddStr(td, "group", "g"), MemberID: cddStr(td, "member", ""),
		GenerationID: int32(cddNum(h.t, td, "generation", 0)), ProtocolType: strPtr("consumer"), ProtocolName: strPtr("range")}
	// A leader's input lines are "MEMBER TOPIC:P,P": the assignment it
	// computed.
	for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		if req.Assignments == nil {
			req.Assignments = map[string][]byte{}
		}
		name, ps, _ := strings.Cut(f[1], ":")
		a := kmsg.ConsumerMemberAssignment{Version: 3, Topics: []kmsg.ConsumerMemberAssignmentTopic{{Topic: name}}}
		for _, p := range strings.Split(ps, ",") {
			var n int32
			fmt.Sscan(p, &n)
			a.Topics[0].Partitions = append(a.Topics[0].Partitions, n)
		}
		req.Assignments[f[0]] = a.AppendTo(nil)
	}
	var res *SyncResult
	h.mgr.Sync(h.now, req, func(r SyncResult) { res = &r })
	h.settle()
	if res == nil {
		h.printf("sync waits\n")
		return
	}
	if res.ErrorCode != 0 {
		h.printf("%s: %s\n", req.MemberID, cddErrName(res.ErrorCode))
		return
	}
	var a kmsg.ConsumerMemberAssignment
	if err := a.ReadFrom(res.Assignment); err != nil {
		h.printf("%s: undecodable assignment: %v\n", req.MemberID, err)
		return
	}
	var parts []string
	for _, t := range a.Topics {
		parts = append(parts, fmt.Sprintf("%s:%s", t.Topic, joinInt32(t.Partitions)))
	}
	h.printf("%s: assignment v%d %s\n", req.MemberID, a.Version, strings.Join(parts, ";"))
}

// consumerHeartbeat sends "cheartbeat group= member= generation=".
func (h *cddHarness) classicHeartbeat(td *datadriven.TestData) {
	req := HeartbeatRequest{GroupID: cddStr(td, "group", "g"), MemberID: cddStr(td, "member", ""), GenerationID: int32(cddNum(h.t, td, "generation", 0))}
	code := h.mgr.Heartbeat(h.now, req)
	h.settle()
	h.printf("%s: %s\n", req.MemberID, cddErrName(code))
}

// classicLeave sends "cleave group= member=".
func (h *cddHarness) classicLeave(td *datadriven.TestData) {
	res := h.mgr.Leave(h.now, cddStr(td, "group", "g"), []LeaveMember{{MemberID: cddStr(td, "member", "")}})
	h.settle()
	h.printf("leave: %s %v\n", cddErrName(res.ErrorCode), res.Members)
}

// classicState prints "cstate group=": a classic group's state,
// generation and members.
func (h *cddHarness) classicState(td *datadriven.TestData) {
	id := cddStr(td, "group", "g")
	g, ok := h.mgr.Group(id)
	switch {
	case !ok:
		h.printf("no group %s\n", id)
	case g.cg != nil:
		h.printf("group %s is a consumer group\n", id)
	default:
		h.printf("classic group %s: %s generation=%d members=%s\n", id, g.state, g.generation, strings.Join(g.order, ","))
	}
}

func joinInt32(ps []int32) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, ",")
}
