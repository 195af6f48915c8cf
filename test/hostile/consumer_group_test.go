package hostile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/testbin"
)

// TestConsumerGroupHeartbeatBadInput sends KIP-848 heartbeats a client
// would not send and checks each gets Kafka's error code, that a huge
// subscription is refused without being kept, and that the group and the
// broker still work afterwards.
func TestConsumerGroupHeartbeatBadInput(t *testing.T) {
	srv := testbin.StartServer(t, binaryPath, testbin.ServerConfig{DataDir: t.TempDir()})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 3, 1, nil, "hb-topic"); err != nil {
		t.Fatal(err)
	}
	hb := func(group, member string, epoch int32, mutate func(*kmsg.ConsumerGroupHeartbeatRequest)) *kmsg.ConsumerGroupHeartbeatResponse {
		t.Helper()
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Group, req.MemberID, req.MemberEpoch = group, member, epoch
		req.RebalanceTimeoutMillis = 30000
		req.SubscribedTopicNames = []string{"hb-topic"}
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		if mutate != nil {
			mutate(req)
		}
		for {
			resp, err := req.RequestWith(ctx, cl)
			if errors.Is(err, kerr.CoordinatorNotAvailable) && ctx.Err() == nil {
				time.Sleep(100 * time.Millisecond) // the offsets topic is being created
				continue
			}
			if err != nil {
				t.Fatalf("heartbeat: %v", err)
			}
			// The offsets topic is created on first use.
			if resp.ErrorCode == kerr.CoordinatorNotAvailable.Code || resp.ErrorCode == kerr.NotCoordinator.Code || resp.ErrorCode == kerr.CoordinatorLoadInProgress.Code {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			return resp
		}
	}
	want := func(name string, resp *kmsg.ConsumerGroupHeartbeatResponse, code int16) {
		t.Helper()
		if resp.ErrorCode != code {
			msg := ""
			if resp.ErrorMessage != nil {
				msg = *resp.ErrorMessage
			}
			t.Errorf("%s: error %v (%s), want %v", name, kerr.ErrorForCode(resp.ErrorCode), msg, kerr.ErrorForCode(code))
		}
	}

	joined := hb("g1", "member-a", 0, nil)
	want("join", joined, 0)
	epoch := joined.MemberEpoch

	want("an epoch ahead of the coordinator's", hb("g1", "member-a", epoch+5, nil), kerr.FencedMemberEpoch.Code)
	want("an unknown server assignor", hb("g1", "member-b", 0, func(r *kmsg.ConsumerGroupHeartbeatRequest) {
		r.ServerAssignor = kmsg.StringPtr("sticky-but-not-really")
	}), kerr.UnsupportedAssignor.Code)
	want("an invalid regex", hb("g1", "member-b", 0, func(r *kmsg.ConsumerGroupHeartbeatRequest) {
		r.SubscribedTopicNames, r.SubscribedTopicRegex = nil, kmsg.StringPtr("hb-(topic")
	}), kerr.InvalidRegularExpression.Code)
	want("a member id of another group", hb("g2", "member-a", epoch, nil), kerr.GroupIDNotFound.Code)
	hb("g2", "member-z", 0, nil)
	want("a member id of another group, that group existing", hb("g2", "member-a", epoch, nil), kerr.UnknownMemberID.Code)
	want("no member id", hb("g1", "", 0, nil), kerr.InvalidRequest.Code)
	want("an epoch below -2", hb("g1", "member-a", -3, nil), kerr.InvalidRequest.Code)
	want("owned partitions on joining", hb("g1", "member-c", 0, func(r *kmsg.ConsumerGroupHeartbeatRequest) {
		r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{{Partitions: []int32{0}}}
	}), kerr.InvalidRequest.Code)

	// 200,000 subscribed names (about 4 MB): refused, and not kept.
	huge := make([]string, 200_000)
	for i := range huge {
		huge[i] = fmt.Sprintf("no-such-topic-%08d", i)
	}
	want("a huge subscription", hb("g1", "member-huge", 0, func(r *kmsg.ConsumerGroupHeartbeatRequest) {
		r.SubscribedTopicNames = huge
	}), kerr.UnknownServerError.Code)
	describe := kmsg.NewPtrConsumerGroupDescribeRequest()
	describe.Groups = []string{"g1"}
	dresp, err := describe.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	g := dresp.Groups[0]
	if g.ErrorCode != 0 || len(g.Members) != 1 || g.Members[0].MemberID != "member-a" {
		var ids []string
		for _, m := range g.Members {
			ids = append(ids, m.MemberID)
		}
		t.Errorf("after the bad heartbeats the group is %v with members %s, want member-a alone", kerr.ErrorForCode(g.ErrorCode), strings.Join(ids, ","))
	}
	// The member still heartbeats with its epoch.
	want("the member's next heartbeat", hb("g1", "member-a", epoch, nil), 0)
	normalClientWorks(t, srv.Addr(), "after-bad-heartbeats")
}
