package node

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/internal/kafka"
)

// TestBootstrapControllerAPIs runs 3 dedicated controllers in process and
// asks each CONTROLLER listener what --bootstrap-controller asks:
// DescribeCluster (controllers, leader as controller id) and DescribeQuorum
// (the leader answers with every voter's log end offset, none -1; the
// others answer NOT_LEADER_OR_FOLLOWER naming the leader).
func TestBootstrapControllerAPIs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 3 controllers")
	}
	ports := freePorts(t, 3)
	voters := fmt.Sprintf("1@127.0.0.1:%d,2@127.0.0.1:%d,3@127.0.0.1:%d", ports[0], ports[1], ports[2])
	uuid, err := kafka.RandomUUID()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 3)
	defer func() {
		cancel()
		for range 3 {
			if err := <-stopped; err != nil {
				t.Errorf("stop: %v", err)
			}
		}
	}()
	for i := range 3 {
		n := controllerNode(t, int32(i+1), ports[i], voters, uuid.String())
		go func() { stopped <- n.Run(ctx) }()
	}
	ask := func(port int, req kmsg.Request) (kmsg.Response, error) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(fmt.Sprintf("127.0.0.1:%d", port)))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
		defer rcancel()
		return cl.SeedBrokers()[0].Request(rctx, req)
	}
	var leader int32 = -1
	waitUntil(t, 30*time.Second, "a leader named by DescribeCluster on every controller", func() bool {
		seen := map[int32]bool{}
		for _, port := range ports {
			req := kmsg.NewPtrDescribeClusterRequest()
			req.EndpointType = 2
			resp, err := ask(port, req)
			if err != nil {
				return false
			}
			dc := resp.(*kmsg.DescribeClusterResponse)
			if dc.ErrorCode != 0 || len(dc.Brokers) != 3 || dc.ControllerID < 1 {
				return false
			}
			seen[dc.ControllerID] = true
			leader = dc.ControllerID
		}
		return len(seen) == 1
	})
	describe := func(port int) (kmsg.DescribeQuorumResponseTopicPartition, error) {
		req := kmsg.NewPtrDescribeQuorumRequest()
		rt := kmsg.NewDescribeQuorumRequestTopic()
		rt.Topic = "__cluster_metadata"
		rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
		req.Topics = append(req.Topics, rt)
		resp, err := ask(port, req)
		if err != nil {
			return kmsg.DescribeQuorumResponseTopicPartition{}, err
		}
		return resp.(*kmsg.DescribeQuorumResponse).Topics[0].Partitions[0], nil
	}
	waitUntil(t, 30*time.Second, "every voter's log end offset at the high watermark", func() bool {
		p, err := describe(ports[leader-1])
		if err != nil || p.ErrorCode != 0 || p.LeaderID != leader || len(p.CurrentVoters) != 3 {
			return false
		}
		for _, v := range p.CurrentVoters {
			if v.LogEndOffset < p.HighWatermark || v.LogEndOffset <= 0 || v.LastFetchTimestamp <= 0 {
				return false
			}
		}
		return true
	})
	for i, port := range ports {
		if int32(i+1) == leader {
			continue
		}
		p, err := describe(port)
		if err != nil {
			t.Fatal(err)
		}
		if p.ErrorCode != kerr.NotLeaderForPartition.Code || p.LeaderID != leader {
			t.Fatalf("controller %d (not the leader): error %d leader %d, want NOT_LEADER_OR_FOLLOWER naming %d", i+1, p.ErrorCode, p.LeaderID, leader)
		}
	}
}

// waitUntil polls cond until it holds or the timeout passes.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
