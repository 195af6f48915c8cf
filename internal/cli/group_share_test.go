package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestShareDescription: a share group's description from
// ShareGroupDescribe and DescribeShareGroupOffsets answers, and its
// tables: -1 start offsets and lags (not known yet) print "-", a
// partition's error its name.
func TestShareDescription(t *testing.T) {
	g := kadm.DescribedShareGroup{GroupID: "sg", Coordinator: kadm.BrokerDetail{NodeID: 1}, GroupState: "Stable",
		GroupEpoch: 5, AssignmentEpoch: 5, Assignor: "simple", Members: []kadm.ShareGroupMember{
			{MemberID: "m1", MemberEpoch: 5, ClientID: "c1", ClientHost: "/127.0.0.1", Assignment: kadm.TopicsSet{"orders": {0: {}, 1: {}}}},
			{MemberID: "m2", MemberEpoch: 4, ClientID: "c2", ClientHost: "/127.0.0.2", Assignment: kadm.TopicsSet{"orders": {1: {}}}},
		}}
	offsets := kadm.DescribedShareGroupOffsets{Group: "sg", Offsets: kadm.ShareOffsets{"orders": {
		1: {Topic: "orders", Partition: 1, StartOffset: -1, Lag: -1},
		0: {Topic: "orders", Partition: 0, StartOffset: 12, LeaderEpoch: 2, Lag: 3},
	}, "audit": {
		0: {Topic: "audit", Partition: 0, Err: kerr.NotLeaderForPartition},
	}}}
	d := shareDescription(g, offsets)
	if d.Type != "share" || *d.GroupEpoch != 5 || d.Assignor != "simple" || len(d.Members) != 2 || len(d.Offsets) != 3 {
		t.Fatalf("description: %+v", d)
	}
	var b strings.Builder
	if err := (&describeOptions{}).print(&b, d); err != nil {
		t.Fatal(err)
	}
	want := `GROUP             sg
TYPE              share
STATE             Stable
GROUP-EPOCH       5
ASSIGNMENT-EPOCH  5
ASSIGNOR          simple
COORDINATOR       1
MEMBERS           2

MEMBER-ID  CLIENT-ID  HOST        MEMBER-EPOCH  ASSIGNMENT
m1         c1         /127.0.0.1  5             orders:0,1
m2         c2         /127.0.0.2  4             orders:1

TOPIC   PARTITION  LEADER-EPOCH  START-OFFSET              LAG
audit   0          -             NOT_LEADER_FOR_PARTITION  -
orders  0          2             12                        3
orders  1          0             -                         -
`
	if got := b.String(); got != want {
		t.Fatalf("describe output:\n%s\nwant:\n%s", got, want)
	}
	b.Reset()
	if err := printShareOffsets(&b, shareDescription(g, kadm.DescribedShareGroupOffsets{})); err != nil || b.String() != "offsets: no partition initialized\n" {
		t.Fatalf("no offsets: %q %v", b.String(), err)
	}
	if _, err := groupTypes([]string{"Share", "classic"}); err != nil {
		t.Fatalf("--type share: %v", err)
	}
}

// servesShareGroups reports whether the broker advertises
// ShareGroupHeartbeat and DescribeShareGroupOffsets (share.version
// enabled); the share group tests skip otherwise.
func servesShareGroups(t *testing.T, cl *kgo.Client) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("ApiVersions: %v", err)
	}
	have := map[int16]bool{}
	for _, k := range resp.ApiKeys {
		have[k.ApiKey] = true
	}
	return have[76] && have[77] && have[90]
}

// TestGroupShare: a share group joined with ShareGroupHeartbeat is listed
// with type share, described with its member, assignment and the start
// offset and lag of its partitions, and deleted once its member left.
func TestGroupShare(t *testing.T) {
	f := newGroupFixture(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if !servesShareGroups(t, cl) {
		t.Skip("the broker does not serve share groups (ShareGroupHeartbeat, ShareGroupDescribe, DescribeShareGroupOffsets not advertised)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const member = "sluice-cli-share-member"
	heartbeat := func(epoch int32, topics []string) *kmsg.ShareGroupHeartbeatResponse {
		t.Helper()
		req := kmsg.NewPtrShareGroupHeartbeatRequest()
		req.GroupID, req.MemberID, req.MemberEpoch, req.SubscribedTopicNames = f.group, member, epoch, topics
		// kgo sends it to the group's coordinator; a fresh cluster's
		// coordinator may not be ready yet.
		resp, err := retryCoordinator(ctx, func() (*kmsg.ShareGroupHeartbeatResponse, error) {
			resp, err := req.RequestWith(ctx, cl)
			if err == nil {
				err = kerr.ErrorForCode(resp.ErrorCode)
			}
			return resp, err
		}, nil)
		if err != nil {
			t.Fatalf("ShareGroupHeartbeat: %v", err)
		}
		return resp
	}
	epoch := heartbeat(0, []string{f.topic}).MemberEpoch
	// The partitions are assigned once their share state is initialized
	// (the heartbeat after the coordinator recorded it).
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := heartbeat(epoch, nil)
		epoch = r.MemberEpoch
		if r.Assignment != nil && len(r.Assignment.TopicPartitions) == 1 && len(r.Assignment.TopicPartitions[0].Partitions) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("share member not assigned both partitions after 30 s: %+v", r)
		}
		time.Sleep(200 * time.Millisecond) // polling the coordinator's asynchronous initialization
	}

	out := f.run(t, "group", "list", "--type", "share")
	if !hasRow(out, f.group, "share", "Stable", "share", "1") {
		t.Fatalf("group list --type share does not show %s as a Stable share group with 1 member:\n%s", f.group, out)
	}
	d := f.describeJSON(t)
	if d.Type != "share" || d.State != "Stable" || d.Assignor != "simple" || len(d.Members) != 1 || d.Members[0].MemberID != member ||
		fmt.Sprint(d.Members[0].Assignment) != fmt.Sprintf("[{%s [0 1]}]", f.topic) || len(d.Offsets) != 2 {
		t.Fatalf("describe --json of the share group: %+v", d)
	}
	out = f.run(t, "group", "describe", f.group, "--offsets")
	if row := rowStartingWith(out, f.topic); len(row) != 5 {
		t.Fatalf("offsets table of the share group:\n%s", out)
	}

	heartbeat(-1, nil)
	f.run(t, "group", "delete", f.group)
	if err := f.fail(t, "group", "describe", f.group); !strings.Contains(err.Error(), "GROUP_ID_NOT_FOUND") {
		t.Fatalf("describe after delete: %v", err)
	}
}
