package replication

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/replication/replicationtest"
)

func TestKafkaFetchEncoding(t *testing.T) {
	id := replicationtest.TopicID(3)
	req := ReplicaFetchRequest{ReplicaID: 2, BrokerEpoch: 77, MaxWait: 500 * time.Millisecond, MinBytes: 1, MaxBytes: 1 << 20,
		Partitions: []ReplicaFetchPartition{
			{TP: tp("a", 0), TopicID: id, FetchOffset: 10, CurrentLeaderEpoch: 4, LastFetchedEpoch: 3, MaxBytes: 100},
			{TP: tp("a", 1), TopicID: id, FetchOffset: 20, CurrentLeaderEpoch: 4, LastFetchedEpoch: -1, MaxBytes: 100},
		}}
	kreq := fetchRequest(req)
	if kreq.ReplicaID != 2 || kreq.ReplicaState.ID != 2 || kreq.ReplicaState.Epoch != 77 || kreq.MaxWaitMillis != 500 || kreq.SessionEpoch != -1 {
		t.Fatalf("request header fields: %+v", kreq)
	}
	if len(kreq.Topics) != 1 || kreq.Topics[0].TopicID != id || len(kreq.Topics[0].Partitions) != 2 {
		t.Fatalf("partitions not grouped under one topic: %+v", kreq.Topics)
	}
	if p := kreq.Topics[0].Partitions[0]; p.FetchOffset != 10 || p.CurrentLeaderEpoch != 4 || p.LastFetchedEpoch != 3 {
		t.Fatalf("partition fields: %+v", p)
	}

	// A v13+ answer names topics by id only.
	resp := kmsg.NewPtrFetchResponse()
	rt := kmsg.NewFetchResponseTopic()
	rt.TopicID = id
	p0 := kmsg.NewFetchResponseTopicPartition()
	p0.Partition, p0.HighWatermark, p0.LogStartOffset = 0, 9, 0
	p0.DivergingEpoch.Epoch, p0.DivergingEpoch.EndOffset = 2, 8
	p1 := kmsg.NewFetchResponseTopicPartition()
	p1.Partition, p1.HighWatermark, p1.RecordBatches = 1, 30, []byte{1, 2}
	rt.Partitions = append(rt.Partitions, p0, p1)
	resp.Topics = append(resp.Topics, rt)
	out, err := fetchResults(req, resp)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0].TP != tp("a", 0) || out[0].DivergingEpoch == nil || *out[0].DivergingEpoch != (EpochEndOffset{Epoch: 2, EndOffset: 8}) {
		t.Fatalf("first result: %+v", out)
	}
	if out[1].DivergingEpoch != nil || out[1].HighWatermark != 30 || len(out[1].Records) != 2 {
		t.Fatalf("second result: %+v", out[1])
	}
}

func TestBrokerAddress(t *testing.T) {
	d := metadata.NewDelta(metadata.EmptyImage())
	if err := d.Replay(0, 1, &metadata.RegisterBrokerRecord{BrokerID: 4, BrokerEpoch: 1, Endpoints: []metadata.Endpoint{
		{Name: "CONTROLLER", Host: "h", Port: 1}, {Name: "PLAINTEXT", Host: "::1", Port: 9092}}}); err != nil {
		t.Fatal(err)
	}
	im := d.Apply()
	if addr, ok := BrokerAddress(im, 4, "PLAINTEXT"); !ok || addr != "[::1]:9092" {
		t.Fatalf("address %q %v", addr, ok)
	}
	if _, ok := BrokerAddress(im, 4, "SSL"); ok {
		t.Fatal("an absent listener resolved")
	}
	if _, ok := BrokerAddress(im, 5, "PLAINTEXT"); ok {
		t.Fatal("an unknown broker resolved")
	}
}
