package replication

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/transport"
)

// KafkaTransport sends follower fetches as Kafka Fetch requests (replica id
// and ReplicaState set, no fetch session) to the leader's endpoint on the
// inter-broker listener, as the metadata image registers it, over the
// node's one client pool to its peers; kgo negotiates the version (v12+
// carries diverging epochs, v13+ topic ids, v15+ ReplicaState).
type KafkaTransport struct {
	image    func() *metadata.Image
	listener string
	peers    *transport.Pool
}

// NewKafkaTransport returns a transport resolving brokers in image() on
// the named listener (inter.broker.listener.name), sending over peers
// (which its owner closes).
func NewKafkaTransport(image func() *metadata.Image, listener string, peers *transport.Pool) *KafkaTransport {
	return &KafkaTransport{image: image, listener: listener, peers: peers}
}

// BrokerAddress is a broker's host:port on a listener in im.
func BrokerAddress(im *metadata.Image, id int32, listener string) (string, bool) {
	b, ok := im.Broker(id)
	if !ok {
		return "", false
	}
	for _, e := range b.Endpoints {
		if e.Name == listener {
			return net.JoinHostPort(e.Host, strconv.Itoa(int(e.Port))), true
		}
	}
	return "", false
}

// FetchFromLeader implements Transport.
func (t *KafkaTransport) FetchFromLeader(ctx context.Context, leader int32, req ReplicaFetchRequest) ([]ReplicaFetchResult, error) {
	addr, ok := BrokerAddress(t.image(), leader, t.listener)
	if !ok {
		return nil, fmt.Errorf("broker %d has no %s endpoint", leader, t.listener)
	}
	kreq := fetchRequest(req)
	resp, err := t.peers.Request(ctx, addr, kreq)
	if err != nil {
		return nil, fmt.Errorf("fetch from broker %d at %s: %w", leader, addr, err)
	}
	kresp, ok := resp.(*kmsg.FetchResponse)
	if !ok {
		return nil, fmt.Errorf("fetch from broker %d answered %T", leader, resp)
	}
	return fetchResults(req, kresp)
}

// fetchRequest encodes a follower fetch: topics by name and by id, so any
// negotiated version carries what it needs.
func fetchRequest(req ReplicaFetchRequest) *kmsg.FetchRequest {
	kreq := kmsg.NewPtrFetchRequest()
	kreq.ReplicaID = req.ReplicaID
	kreq.ReplicaState.ID, kreq.ReplicaState.Epoch = req.ReplicaID, req.BrokerEpoch
	kreq.MaxWaitMillis = int32(req.MaxWait.Milliseconds())
	kreq.MinBytes, kreq.MaxBytes = req.MinBytes, req.MaxBytes
	kreq.SessionID, kreq.SessionEpoch = 0, -1
	index := make(map[string]int)
	for _, p := range req.Partitions {
		i, ok := index[p.TP.Topic]
		if !ok {
			i = len(kreq.Topics)
			index[p.TP.Topic] = i
			kt := kmsg.NewFetchRequestTopic()
			kt.Topic, kt.TopicID = p.TP.Topic, p.TopicID
			kreq.Topics = append(kreq.Topics, kt)
		}
		kp := kmsg.NewFetchRequestTopicPartition()
		kp.Partition, kp.CurrentLeaderEpoch, kp.FetchOffset = p.TP.Partition, p.CurrentLeaderEpoch, p.FetchOffset
		kp.LastFetchedEpoch, kp.LogStartOffset, kp.PartitionMaxBytes = p.LastFetchedEpoch, -1, p.MaxBytes
		kreq.Topics[i].Partitions = append(kreq.Topics[i].Partitions, kp)
	}
	return kreq
}

// fetchResults decodes the leader's answer into per-partition results,
// naming topics from the request (v13+ answers carry only ids).
func fetchResults(req ReplicaFetchRequest, resp *kmsg.FetchResponse) ([]ReplicaFetchResult, error) {
	if resp.ErrorCode != 0 {
		return nil, fmt.Errorf("fetch refused whole with error code %d", resp.ErrorCode)
	}
	byID := make(map[kafka.UUID]string)
	for _, p := range req.Partitions {
		byID[p.TopicID] = p.TP.Topic
	}
	var out []ReplicaFetchResult
	for _, rt := range resp.Topics {
		name := rt.Topic
		if name == "" {
			name = byID[kafka.UUID(rt.TopicID)]
		}
		for _, rp := range rt.Partitions {
			r := ReplicaFetchResult{TP: kafka.TopicPartition{Topic: name, Partition: rp.Partition}, ErrorCode: rp.ErrorCode,
				HighWatermark: rp.HighWatermark, LogStartOffset: rp.LogStartOffset, Records: rp.RecordBatches}
			if rp.DivergingEpoch.Epoch >= 0 && rp.DivergingEpoch.EndOffset >= 0 {
				r.DivergingEpoch = &EpochEndOffset{Epoch: rp.DivergingEpoch.Epoch, EndOffset: rp.DivergingEpoch.EndOffset}
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// LeaderLogOffsets implements Transport with a ListOffsets request
// (earliest and latest) carrying this broker's replica id, so the leader
// answers its log end offset rather than the high watermark.
func (t *KafkaTransport) LeaderLogOffsets(ctx context.Context, leader, replicaID int32, tp kafka.TopicPartition, leaderEpoch int32) (int64, int64, error) {
	addr, ok := BrokerAddress(t.image(), leader, t.listener)
	if !ok {
		return 0, 0, fmt.Errorf("broker %d has no %s endpoint", leader, t.listener)
	}
	var offsets [2]int64
	for i, ts := range []int64{kafka.ListOffsetsEarliest, kafka.ListOffsetsLatest} {
		req := kmsg.NewPtrListOffsetsRequest()
		req.ReplicaID = replicaID
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = tp.Topic
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch, rp.Timestamp = tp.Partition, leaderEpoch, ts
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := t.peers.Request(ctx, addr, req)
		if err != nil {
			return 0, 0, fmt.Errorf("list offsets of %s on broker %d: %w", tp, leader, err)
		}
		lr, ok := resp.(*kmsg.ListOffsetsResponse)
		if !ok || len(lr.Topics) != 1 || len(lr.Topics[0].Partitions) != 1 {
			return 0, 0, fmt.Errorf("list offsets of %s on broker %d: malformed answer", tp, leader)
		}
		p := lr.Topics[0].Partitions[0]
		if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
			return 0, 0, fmt.Errorf("list offsets of %s on broker %d: %w", tp, leader, err)
		}
		offsets[i] = p.Offset
	}
	return offsets[0], offsets[1], nil
}
