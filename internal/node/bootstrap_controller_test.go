package node

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/testutil"
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
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		seen := map[int32]bool{}
		for _, port := range ports {
			req := kmsg.NewPtrDescribeClusterRequest()
			req.EndpointType = 2
			resp, err := ask(port, req)
			if err != nil {
				return fmt.Errorf("port %d: %w", port, err)
			}
			dc := resp.(*kmsg.DescribeClusterResponse)
			if dc.ErrorCode != 0 || len(dc.Brokers) != 3 || dc.ControllerID < 1 {
				return fmt.Errorf("port %d: error %d, %d controllers, controller id %d", port, dc.ErrorCode, len(dc.Brokers), dc.ControllerID)
			}
			seen[dc.ControllerID] = true
			leader = dc.ControllerID
		}
		if len(seen) != 1 {
			return fmt.Errorf("controllers name different leaders: %v", seen)
		}
		return nil
	}, "a leader named by DescribeCluster on every controller")
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
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		p, err := describe(ports[leader-1])
		if err != nil {
			return err
		}
		if p.ErrorCode != 0 || p.LeaderID != leader || len(p.CurrentVoters) != 3 {
			return fmt.Errorf("error %d, leader %d, %d voters", p.ErrorCode, p.LeaderID, len(p.CurrentVoters))
		}
		for _, v := range p.CurrentVoters {
			if v.LogEndOffset < p.HighWatermark || v.LogEndOffset <= 0 || v.LastFetchTimestamp <= 0 {
				return fmt.Errorf("voter %d: log end offset %d, high watermark %d, last fetch %d", v.ReplicaID, v.LogEndOffset, p.HighWatermark, v.LastFetchTimestamp)
			}
		}
		return nil
	}, "every voter's log end offset at the high watermark")
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
