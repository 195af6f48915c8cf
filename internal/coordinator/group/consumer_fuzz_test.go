package group

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/kafka"
)

// FuzzConsumerGroup drives one consumer group with a random sequence of
// heartbeats (mostly from clients that follow the protocol, some with
// random epochs and owned lists), leaves, clock moves, topic changes and
// reloads, and checks the group's invariants after every step.
func FuzzConsumerGroup(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 0, 2, 0, 0, 0, 1, 0, 2, 3, 50, 0, 0})
	f.Add([]byte{0, 0, 5, 0, 1, 0, 4, 1, 0, 0, 0, 1, 2, 0, 0, 0, 0, 1})
	f.Add([]byte{0, 3, 0, 7, 0, 3, 2, 3, 0, 7, 0, 3, 6, 0, 1, 5, 3, 2, 0, 7, 0, 3})
	f.Add([]byte{0, 0, 0, 1, 1, 0, 9, 4, 2, 1, 3, 20, 0, 0, 7, 1, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		fz := newConsumerFuzz(t, data)
		for step := 0; step < 120 && fz.more(); step++ {
			fz.step()
			fz.check()
		}
	})
}

// fuzzClient is what one simulated consumer believes: its member id, the
// epoch and partitions of its last answer.
type fuzzClient struct {
	id       string
	instance *string
	joined   bool
	epoch    int32
	owned    []TopicPartitions
	rejoins  int
}

type consumerFuzz struct {
	t       *testing.T
	h       *cddHarness
	data    []byte
	clients []*fuzzClient
	trace   []string
}

func newConsumerFuzz(t *testing.T, data []byte) *consumerFuzz {
	h := newCDDHarness(t)
	h.cfg.ConsumerSessionTimeout = 30 * time.Second
	h.mgr = NewManager(h.cfg, h.now)
	fz := &consumerFuzz{t: t, h: h, data: data}
	for i, name := range []string{"a", "b", "c", "d"} {
		c := &fuzzClient{id: name}
		if i >= 2 {
			inst := "i-" + name
			c.instance = &inst
		}
		fz.clients = append(fz.clients, c)
	}
	fz.setTopic("t1", 3)
	fz.setTopic("t2", 2)
	return fz
}

func (fz *consumerFuzz) more() bool { return len(fz.data) > 0 }

func (fz *consumerFuzz) next() byte {
	if len(fz.data) == 0 {
		return 0
	}
	b := fz.data[0]
	fz.data = fz.data[1:]
	return b
}

func (fz *consumerFuzz) logf(format string, args ...any) {
	fz.trace = append(fz.trace, fmt.Sprintf(format, args...))
}

func (fz *consumerFuzz) fail(format string, args ...any) {
	fz.t.Helper()
	fz.t.Fatalf("%s\nsteps:\n  %s", fmt.Sprintf(format, args...), joinLines(fz.trace))
}

func joinLines(lines []string) string {
	out := ""
	for i, l := range lines {
		if i > 0 {
			out += "\n  "
		}
		out += l
	}
	return out
}

// setTopic creates or resizes a topic (parts 0 deletes it) as a new
// topics version.
func (fz *consumerFuzz) setTopic(name string, parts int32) {
	h := fz.h
	next := &cddTopics{byName: make(map[string]TopicInfo, len(h.topics.byName)+1), version: h.topics.version + 1}
	for n, ti := range h.topics.byName {
		next.byName[n] = ti
	}
	switch ti, ok := next.byName[name]; {
	case parts == 0:
		delete(next.byName, name)
	case ok:
		// Partitions only grow.
		ti.Partitions = max(ti.Partitions, parts)
		next.byName[name] = ti
	default:
		h.nextID++
		id := kafka.UUID{15: h.nextID}
		h.names[id] = name
		next.byName[name] = TopicInfo{ID: id, Name: name, Partitions: parts}
	}
	h.topics = next
}

var fuzzTopics = []string{"t1", "t2", "t3", "x1"}

// step reads one operation from the input and runs it.
func (fz *consumerFuzz) step() {
	op := fz.next() % 10
	c := fz.clients[int(fz.next())%len(fz.clients)]
	switch op {
	case 0, 1, 2:
		fz.heartbeat(c, fz.protocolRequest(c), true)
	case 3:
		// A heartbeat whose answer is lost: the client keeps its epoch.
		fz.heartbeat(c, fz.protocolRequest(c), false)
	case 4:
		fz.heartbeat(c, fz.randomRequest(c), true)
	case 5:
		req := ConsumerHeartbeatRequest{GroupID: "g", MemberID: c.id, MemberEpoch: leaveGroupMemberEpoch, InstanceID: c.instance, RebalanceTimeoutMs: -1}
		if c.instance != nil && fz.next()%2 == 0 {
			req.MemberEpoch = leaveGroupStaticMemberEpoch
		}
		fz.heartbeat(c, req, true)
		c.reset()
	case 6:
		d := time.Duration(fz.next()%40) * time.Second
		fz.logf("tick %s", d)
		fz.h.now = fz.h.now.Add(d)
		fz.h.mgr.Tick(fz.h.now)
		fz.h.settle()
	case 7:
		name := fuzzTopics[int(fz.next())%len(fuzzTopics)]
		parts := int32(fz.next() % 5)
		fz.logf("topic %s partitions=%d", name, parts)
		fz.setTopic(name, parts)
	case 8:
		fz.logf("reload")
		fz.checkReload()
		fz.h.mgr = fz.h.replayed()
	case 9:
		// A new subscription on the next heartbeat.
		req := fz.protocolRequest(c)
		if c.joined {
			fz.subscribe(&req)
		}
		fz.heartbeat(c, req, true)
	}
}

// protocolRequest is what a well-behaved client sends: a join, or a
// heartbeat with its epoch and what it owns (full or keep-alive).
func (fz *consumerFuzz) protocolRequest(c *fuzzClient) ConsumerHeartbeatRequest {
	req := ConsumerHeartbeatRequest{GroupID: "g", MemberID: c.id, InstanceID: c.instance, RebalanceTimeoutMs: -1}
	if !c.joined {
		req.RebalanceTimeoutMs = int32(5000 + 5000*int(fz.next()%4))
		req.Owned = []TopicPartitions{}
		fz.subscribe(&req)
		return req
	}
	req.MemberEpoch = c.epoch
	if fz.next()%3 != 0 {
		req.Owned = slices.Clone(c.owned)
		if req.Owned == nil {
			req.Owned = []TopicPartitions{}
		}
	}
	return req
}

// subscribe sets a subscription: some topic names, or a regex, and maybe
// a server assignor.
func (fz *consumerFuzz) subscribe(req *ConsumerHeartbeatRequest) {
	b := fz.next()
	switch b % 4 {
	case 0:
		re := []string{"t.*", "x.*", ".*", "t[12]"}[int(b/4)%4]
		req.SubscribedTopicRegex = &re
		req.SubscribedTopicNames = []string{}
	default:
		var names []string
		for i, n := range fuzzTopics {
			if b&(1<<(i+2)) != 0 {
				names = append(names, n)
			}
		}
		req.SubscribedTopicNames = append([]string{}, names...)
		if fz.next()%2 == 0 {
			empty := ""
			req.SubscribedTopicRegex = &empty
		}
	}
	switch fz.next() % 3 {
	case 1:
		s := "uniform"
		req.ServerAssignor = &s
	case 2:
		s := "range"
		req.ServerAssignor = &s
	}
}

// randomRequest is a heartbeat with an arbitrary epoch and owned list.
func (fz *consumerFuzz) randomRequest(c *fuzzClient) ConsumerHeartbeatRequest {
	req := ConsumerHeartbeatRequest{GroupID: "g", MemberID: c.id, InstanceID: c.instance, RebalanceTimeoutMs: -1}
	req.MemberEpoch = int32(fz.next()%14) - 3
	if fz.next()%2 == 0 {
		for _, name := range fuzzTopics[:2] {
			if ti, ok := fz.h.topics.byName[name]; ok {
				req.Owned = append(req.Owned, TopicPartitions{TopicID: ti.ID, Partitions: []int32{int32(fz.next() % 4)}})
			}
		}
	}
	if req.MemberEpoch == 0 {
		req.RebalanceTimeoutMs = 10000
		req.Owned = []TopicPartitions{}
		fz.subscribe(&req)
	}
	return req
}

// heartbeat sends req as the API layer would (validated first); when
// deliver is set the client learns the answer.
func (fz *consumerFuzz) heartbeat(c *fuzzClient, req ConsumerHeartbeatRequest, deliver bool) {
	h := fz.h
	if code, _ := h.cfg.ValidateConsumerHeartbeat(req, 1); code != 0 {
		fz.logf("%s epoch=%d: invalid %s", req.MemberID, req.MemberEpoch, cddErrName(code))
		return
	}
	var res *ConsumerHeartbeatResult
	h.mgr.ConsumerHeartbeat(h.now, req, func(r ConsumerHeartbeatResult) { res = &r })
	h.settle()
	if res == nil {
		fz.fail("heartbeat %+v not answered", req)
	}
	fz.logf("%s epoch=%d owned=%s names=%v regex=%s -> %s", req.MemberID, req.MemberEpoch, h.formatTPs(req.Owned),
		req.SubscribedTopicNames, cddDeref(req.SubscribedTopicRegex), h.formatResult(*res))
	if !deliver || req.MemberEpoch < 0 {
		return
	}
	switch res.ErrorCode {
	case 0:
		c.id, c.joined, c.epoch = res.MemberID, true, res.MemberEpoch
		if res.Assignment != nil {
			c.owned = res.Assignment
		}
	case kerr.FencedMemberEpoch.Code, kerr.UnknownMemberID.Code, kerr.FencedInstanceID.Code:
		c.reset()
	}
}

// reset makes the client give up its partitions; it joins again under a
// new member id, as a restarted consumer does.
func (c *fuzzClient) reset() {
	c.joined, c.owned, c.epoch = false, nil, 0
	c.rejoins++
	c.id = fmt.Sprintf("%s%d", c.id[:1], c.rejoins)
}

// check verifies the group's invariants: epochs in order, no partition
// held by two members, a member at the target's epoch holds only target
// partitions, the ownership index in step with the members, and the
// records replaying to the same group.
func (fz *consumerFuzz) check() {
	g, ok := fz.h.mgr.groups["g"]
	if !ok || g.cg == nil {
		return
	}
	cg := g.cg
	if cg.assignmentEpoch > cg.groupEpoch {
		fz.fail("assignment epoch %d > group epoch %d", cg.assignmentEpoch, cg.groupEpoch)
	}
	holder := map[kafka.UUID]map[int32]string{}
	for _, id := range cg.memberIDs() {
		m := cg.members[id]
		if m.epoch > cg.groupEpoch {
			fz.fail("member %s epoch %d > group epoch %d", id, m.epoch, cg.groupEpoch)
		}
		for _, p := range []partitionEpochs{m.assigned, m.pendingRevocation} {
			for tid, parts := range p {
				for part := range parts {
					if holder[tid] == nil {
						holder[tid] = map[int32]string{}
					}
					if other, dup := holder[tid][part]; dup {
						fz.fail("%s:%d held by %s and %s\n%s", fz.h.topicName(tid), part, other, id, fz.h.dump(fz.h.mgr, "g", true))
					}
					holder[tid][part] = id
					if e := cg.ownerEpoch(tid, part); e != m.epoch {
						fz.fail("%s:%d held by %s at epoch %d is at %d in the owners index", fz.h.topicName(tid), part, id, m.epoch, e)
					}
				}
			}
		}
		if m.epoch == cg.assignmentEpoch {
			target := cg.target[id]
			for tid, parts := range m.assigned {
				for part := range parts {
					if !slices.Contains(target[tid], part) {
						fz.fail("member %s at epoch %d holds %s:%d outside its target\n%s", id, m.epoch, fz.h.topicName(tid), part, fz.h.dump(fz.h.mgr, "g", true))
					}
				}
			}
		}
	}
	fz.checkRegexes(cg)
	for tid, parts := range cg.owners {
		for part := range parts {
			if _, ok := holder[tid][part]; !ok {
				fz.fail("owners index has %s:%d that no member holds", fz.h.topicName(tid), part)
			}
		}
	}
	fz.checkReload()
}

// checkReload replays every record written so far into a fresh Manager
// and compares the group.
func (fz *consumerFuzz) checkReload() {
	live := fz.h.dump(fz.h.mgr, "g", true)
	if loaded := fz.h.dump(fz.h.replayed(), "g", true); live != loaded {
		fz.fail("reload differs:\nlive:\n%s\nreloaded:\n%s", live, loaded)
	}
}

// checkRegexes verifies that every member's regex is resolved in the
// group and that the group keeps no regex nobody subscribes to.
func (fz *consumerFuzz) checkRegexes(cg *consumerGroup) {
	used := map[string]bool{}
	for _, id := range cg.memberIDs() {
		if re := cg.members[id].regex; re != "" {
			used[re] = true
			if _, ok := cg.regexes[re]; !ok {
				fz.fail("member %s subscribes to %q, which the group has not resolved", id, re)
			}
		}
	}
	for re := range cg.regexes {
		if !used[re] {
			fz.fail("the group keeps regex %q that no member subscribes to", re)
		}
	}
}
