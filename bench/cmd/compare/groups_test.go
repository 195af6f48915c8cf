package main

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestSettled(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	view := func(assigned map[int32]int, seen map[int32]int) memberView {
		v := memberView{Assigned: map[int32]time.Time{}, Seen: map[int32]time.Time{}}
		for p, ms := range assigned {
			v.Assigned[p] = at(ms)
		}
		for p, ms := range seen {
			v.Seen[p] = at(ms)
		}
		return v
	}
	tests := []struct {
		name   string
		views  []memberView
		want   bool
		wantAt time.Time
	}{
		{"all held and polled", []memberView{
			view(map[int32]int{0: 0, 1: 0}, map[int32]int{0: 10, 1: 30}),
			view(map[int32]int{2: 5}, map[int32]int{2: 20}),
		}, true, at(30)},
		{"a partition held by nobody", []memberView{
			view(map[int32]int{0: 0}, map[int32]int{0: 10}),
			view(map[int32]int{2: 5}, map[int32]int{2: 20}),
		}, false, time.Time{}},
		{"a partition held twice", []memberView{
			view(map[int32]int{0: 0, 1: 0}, map[int32]int{0: 10, 1: 10}),
			view(map[int32]int{1: 5, 2: 5}, map[int32]int{1: 20, 2: 20}),
		}, false, time.Time{}},
		{"a held partition not polled yet", []memberView{
			view(map[int32]int{0: 0, 1: 0}, map[int32]int{0: 10}),
			view(map[int32]int{2: 5}, map[int32]int{2: 20}),
		}, false, time.Time{}},
		{"a member holding nothing", []memberView{
			view(map[int32]int{0: 0, 1: 0, 2: 0}, map[int32]int{0: 10, 1: 10, 2: 10}),
			view(nil, nil),
		}, false, time.Time{}},
		{"a partition outside the topic", []memberView{
			view(map[int32]int{0: 0, 1: 0, 7: 0}, map[int32]int{0: 1, 1: 1, 7: 1}),
		}, false, time.Time{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := settled(tc.views, 3)
			if ok != tc.want || !got.Equal(tc.wantAt) {
				t.Fatalf("settled = %v, %v; want %v, %v", got, ok, tc.wantAt, tc.want)
			}
		})
	}
}

func TestLastAssigned(t *testing.T) {
	t0 := time.Now()
	views := []memberView{
		{Assigned: map[int32]time.Time{0: t0.Add(-time.Second), 1: t0.Add(300 * time.Millisecond)}},
		{Assigned: map[int32]time.Time{2: t0.Add(200 * time.Millisecond)}},
	}
	if got, ok := lastAssigned(views, t0); !ok || !got.Equal(t0.Add(300*time.Millisecond)) {
		t.Fatalf("lastAssigned = %v, %v; want +300ms", got, ok)
	}
	if _, ok := lastAssigned(views[:1], t0.Add(time.Second)); ok {
		t.Fatal("an assignment before the mark counted")
	}
}

func TestGroupMemberCountsOnlyHeldPartitionsAfterTheMark(t *testing.T) {
	m := &groupMember{assigned: map[int32]time.Time{}, seen: map[int32]time.Time{}}
	t0 := time.Now()
	m.assign([]int32{0, 1})
	m.sawRecord(0, t0)
	m.setMark(t0.Add(time.Second))
	m.sawRecord(1, t0.Add(500*time.Millisecond)) // polled before the mark
	m.sawRecord(2, t0.Add(2*time.Second))        // not held
	m.sawRecord(1, t0.Add(3*time.Second))
	m.sawRecord(1, t0.Add(4*time.Second)) // the first poll counts
	v := m.view()
	if len(v.Seen) != 1 || !v.Seen[1].Equal(t0.Add(3*time.Second)) {
		t.Fatalf("seen = %v, want only partition 1 at +3s", v.Seen)
	}
	m.drop([]int32{1})
	if v := m.view(); len(v.Assigned) != 1 || len(v.Seen) != 0 {
		t.Fatalf("after dropping 1: %+v", v)
	}
}

func TestProtocolCheck(t *testing.T) {
	consumer, classic := groupVariants[0], groupVariants[1]
	if !consumer.Consumer || classic.Consumer {
		t.Fatal("the first variant must be the consumer protocol, the second classic")
	}
	tests := []struct {
		v        groupVariant
		joins    int64
		hbs      int64
		wantFail string
	}{
		{consumer, 0, 40, ""},
		{consumer, 10, 0, "fell back to the classic protocol"},
		{consumer, 0, 0, "no ConsumerGroupHeartbeat"},
		{classic, 12, 0, ""},
		{classic, 0, 0, "classic variant wrote 0 JoinGroup"},
	}
	for _, tc := range tests {
		err := protocolCheck(tc.v, tc.joins, tc.hbs)
		if tc.wantFail == "" && err != nil || tc.wantFail != "" && (err == nil || !strings.Contains(err.Error(), tc.wantFail)) {
			t.Errorf("protocolCheck(%s, %d, %d) = %v, want %q", tc.v.Key, tc.joins, tc.hbs, err, tc.wantFail)
		}
	}
}

func TestGroupTargetNotes(t *testing.T) {
	res := newResults()
	add := func(v groupVariant, sys system, ms ...float64) {
		for i, x := range ms {
			res.add(rebalanceRow(v), sys, i+1, x, "1 1 1")
		}
	}
	add(groupVariants[0], sysKafka, 5000, 4000, 4500)
	add(groupVariants[1], sysKafka, 500)
	add(groupVariants[1], sysSluice, 400)
	add(groupVariants[2], sysSluice, 3000)
	notes := strings.Join(groupTargetNotes(res), "\n")
	for _, want := range []string{
		"target 1, Sluice's consumer protocol at most Kafka's (rebalance medians): n/a, no value for Sluice consumer (see Failed runs)",
		"For comparison, Kafka's consumer protocol against its classic protocol (classic-coop): Kafka consumer 4500 ms / Kafka classic-coop 500 ms = 9.00",
		"(classic-eager): n/a, no value for Kafka classic-eager (see Failed runs)",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	add(groupVariants[0], sysSluice, 600, 800)
	notes = strings.Join(groupTargetNotes(res), "\n")
	for _, want := range []string{
		"Sluice consumer 700 ms / Kafka consumer 4500 ms = 0.16 (target at most 1.00: met)",
		"(classic-coop): Sluice consumer 700 ms / Sluice classic-coop 400 ms = 1.75 (target at most 0.25: missed)",
		"(classic-eager): Sluice consumer 700 ms / Sluice classic-eager 3000 ms = 0.23 (target at most 0.25: met)",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

func TestParseStatusKB(t *testing.T) {
	status := "Name:\tjava\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\n"
	if n, err := parseStatusKB(strings.NewReader(status), "VmRSS"); err != nil || n != 1024*1024 {
		t.Fatalf("VmRSS = %d, %v", n, err)
	}
	if _, err := parseStatusKB(strings.NewReader("VmRSS:\t12 MB\n"), "VmRSS"); err == nil {
		t.Fatal("a VmRSS line not in kB parsed")
	}
	if _, err := parseStatusKB(strings.NewReader("Name:\tjava\n"), "VmRSS"); err == nil {
		t.Fatal("a status without VmRSS parsed")
	}
}

func TestHeartbeatAssignmentHandling(t *testing.T) {
	f := &hbFleet{period: 5 * time.Second, counts: hbCounts{errs: map[int16]int64{}, intervals: map[int32]int64{}}}
	m := &hbMember{group: "g", id: "m"}
	f.members = []*hbMember{m}
	join := f.request(m)
	if join.MemberEpoch != 0 || join.RebalanceTimeoutMillis != 60000 || len(join.SubscribedTopicNames) != 1 || join.Topics == nil {
		t.Fatalf("join request %+v", join)
	}
	topic := [16]byte{1}
	resp := &kmsg.ConsumerGroupHeartbeatResponse{MemberEpoch: 3, HeartbeatIntervalMillis: 5000,
		Assignment: &kmsg.ConsumerGroupHeartbeatResponseAssignment{Topics: []kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic{{TopicID: topic, Partitions: []int32{4, 2}}}}}
	if wait := f.handle(m, resp, nil); wait != 0 {
		t.Fatalf("a new assignment waits %s, want an immediate acknowledgement", wait)
	}
	ack := f.request(m)
	if ack.MemberEpoch != 3 || ack.RebalanceTimeoutMillis != -1 || ack.SubscribedTopicNames != nil || len(ack.Topics) != 1 || len(ack.Topics[0].Partitions) != 2 {
		t.Fatalf("acknowledgement %+v", ack)
	}
	// The same assignment again (Kafka answers a full request with it) is no change.
	resp.Assignment.Topics[0].Partitions = []int32{2, 4}
	if wait := f.handle(m, resp, nil); wait != f.period {
		t.Fatalf("a repeated assignment waits %s, want the period", wait)
	}
	if light := f.request(m); light.Topics != nil || light.SubscribedTopicNames != nil {
		t.Fatalf("steady heartbeat is not the light one: %+v", light)
	}
	if why := f.unsteady(time.Now()); !strings.Contains(why, "does not hold every partition") {
		t.Fatalf("unsteady = %q with partitions 2 and 4 of %d", why, hbPartitions)
	}
	f.handle(m, &kmsg.ConsumerGroupHeartbeatResponse{ErrorCode: 110}, nil)
	if m.epoch != 0 || m.owned != nil || f.counts.errs[110] != 1 {
		t.Fatalf("after FENCED_MEMBER_EPOCH: member %+v, errors %v", m, f.counts.errs)
	}
}

func TestCoversOnce(t *testing.T) {
	if !coversOnce([]groupHolding{{[]int32{0, 2}}, {[]int32{1}}}, 3) {
		t.Fatal("0,2 + 1 covers 3 partitions")
	}
	if coversOnce([]groupHolding{{[]int32{0, 1}}, {[]int32{1, 2}}}, 3) {
		t.Fatal("partition 1 twice counted as covered once")
	}
	if coversOnce([]groupHolding{{[]int32{0, 1}}}, 3) {
		t.Fatal("partition 2 missing counted as covered")
	}
}
