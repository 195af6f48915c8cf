package node

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/replication"
)

// highWatermarks is what the lag series read: a hosted partition's own
// high watermark (a follower's is the leader's as of its last fetch), and
// for the others the leader's, asked with one ListOffsets (latest,
// read_uncommitted: the high watermark) per leader over the peer pool,
// all leaders at once, until ctx ends. A partition without a leader, or
// whose leader did not answer in time, is left out: no lag is reported
// for it.
func (n *Node) highWatermarks(ctx context.Context, tps []kafka.TopicPartition) map[kafka.TopicPartition]int64 {
	out := make(map[kafka.TopicPartition]int64, len(tps))
	var remote []kafka.TopicPartition
	for _, tp := range tps {
		if p, err := n.broker.replicas.Partition(tp); err == nil {
			out[tp] = p.HighWatermark()
		} else {
			remote = append(remote, tp)
		}
	}
	if len(remote) == 0 || n.peers == nil {
		return out
	}
	image := n.broker.publisher.Image()
	byLeader := map[int32][]kafka.TopicPartition{}
	for _, tp := range remote {
		if st, ok := image.Partition(tp); ok && st.Leader >= 0 && st.Leader != n.cfg.NodeID() {
			byLeader[st.Leader] = append(byLeader[st.Leader], tp)
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for leader, parts := range byLeader {
		wg.Go(func() {
			hws := n.leaderHighWatermarks(ctx, image, leader, parts)
			mu.Lock()
			defer mu.Unlock()
			for tp, hw := range hws {
				out[tp] = hw
			}
		})
	}
	wg.Wait()
	return out
}

// leaderHighWatermarks asks one leader for its partitions' high
// watermarks; partitions it answers with an error are left out.
func (n *Node) leaderHighWatermarks(ctx context.Context, image *metadata.Image, leader int32, tps []kafka.TopicPartition) map[kafka.TopicPartition]int64 {
	addr, ok := replication.BrokerAddress(image, leader, n.cfg.InterBrokerListenerName())
	if !ok {
		return nil
	}
	req := kmsg.NewPtrListOffsetsRequest()
	topics := map[string]int{}
	for _, tp := range tps {
		i, ok := topics[tp.Topic]
		if !ok {
			i = len(req.Topics)
			topics[tp.Topic] = i
			rt := kmsg.NewListOffsetsRequestTopic()
			rt.Topic = tp.Topic
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = tp.Partition, kafka.ListOffsetsLatest
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	resp, err := n.peers.Request(ctx, addr, req)
	if err != nil {
		n.logger.Debug("lag: high watermarks not read from the leader", "leader", leader, "err", err)
		return nil
	}
	lr, ok := resp.(*kmsg.ListOffsetsResponse)
	if !ok {
		return nil
	}
	out := map[kafka.TopicPartition]int64{}
	for _, t := range lr.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode == 0 && p.Offset >= 0 {
				out[kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = p.Offset
			}
		}
	}
	return out
}
