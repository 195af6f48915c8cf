package metadata

import (
	"log/slog"
	"testing"

	"github.com/sluice-io/sluice/internal/kafka"
)

// snapshotTestLog is a history that exercises every part of an image:
// changes after creation, a removed topic, deleted configs, fencing.
func snapshotTestLog() []Record {
	rack := "r1"
	v := "compact"
	return []Record{
		&ClusterIDRecord{ClusterID: "c1"},
		&FeatureLevelRecord{Name: MetadataVersionFeature, Level: 3},
		&RegisterBrokerRecord{BrokerID: 1, IncarnationID: kafka.UUID{1}, BrokerEpoch: 10, Endpoints: []Endpoint{{Name: "PLAINTEXT", Host: "h", Port: 9092}}, Rack: &rack, Fenced: true},
		&RegisterBrokerRecord{BrokerID: 2, IncarnationID: kafka.UUID{2}, BrokerEpoch: 11, Fenced: true},
		&UnfenceBrokerRecord{BrokerID: 1, BrokerEpoch: 10},
		&TopicRecord{Name: "a", TopicID: kafka.UUID{15: 1}},
		&PartitionRecord{TopicID: kafka.UUID{15: 1}, Partition: 0, Replicas: []int32{1, 2}, ISR: []int32{1, 2}, Leader: 1},
		&PartitionRecord{TopicID: kafka.UUID{15: 1}, Partition: 1, Replicas: []int32{2, 1}, ISR: []int32{2, 1}, Leader: 2},
		&PartitionChangeRecord{TopicID: kafka.UUID{15: 1}, Partition: 1, Leader: 1, ISR: []int32{1}},
		&TopicRecord{Name: "gone", TopicID: kafka.UUID{15: 2}},
		&ConfigRecord{ResourceType: ConfigResourceTopic, ResourceName: "gone", Name: "cleanup.policy", Value: &v},
		&RemoveTopicRecord{TopicID: kafka.UUID{15: 2}},
		&ConfigRecord{ResourceType: ConfigResourceTopic, ResourceName: "a", Name: "cleanup.policy", Value: &v},
		&ConfigRecord{ResourceType: ConfigResourceBroker, ResourceName: "", Name: "x", Value: &v},
		&ConfigRecord{ResourceType: ConfigResourceBroker, ResourceName: "", Name: "x", Value: nil},
		&ProducerIDsRecord{BrokerID: 1, BrokerEpoch: 10, NextProducerID: 1000},
	}
}

func TestSnapshotRebuildsTheImage(t *testing.T) {
	l := NewLoader(slog.New(slog.DiscardHandler))
	for i, rec := range snapshotTestLog() {
		if err := l.Apply(int64(i), 3, EncodeRecords([]Record{rec})); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	want := l.Image()
	data := l.Snapshot()
	got, err := DecodeSnapshot(want.Offset(), want.Epoch(), data)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Fatalf("snapshot image:\n%s\nwant:\n%s", got, want)
	}
	var notified *Image
	restored := NewLoader(slog.New(slog.DiscardHandler), func(_ *Delta, im *Image) { notified = im })
	if err := restored.Restore(want.Offset(), want.Epoch(), data); err != nil {
		t.Fatal(err)
	}
	if restored.Image().String() != want.String() || notified != restored.Image() {
		t.Fatalf("restored image:\n%s", restored.Image())
	}
	// Records after the snapshot replay on top of it.
	if err := restored.Apply(want.Offset()+1, 4, EncodeRecords([]Record{&FenceBrokerRecord{BrokerID: 1, BrokerEpoch: 10}})); err != nil {
		t.Fatal(err)
	}
	if b, _ := restored.Image().Broker(1); !b.Fenced {
		t.Fatal("record after the snapshot not applied")
	}
	if string(EncodeSnapshot(got)) != string(data) {
		t.Fatal("snapshot of the decoded image differs: encoding is not deterministic")
	}
}

func TestSnapshotRefusesCorruptData(t *testing.T) {
	l := NewLoader(slog.New(slog.DiscardHandler))
	for i, rec := range snapshotTestLog() {
		if err := l.Apply(int64(i), 1, EncodeRecords([]Record{rec})); err != nil {
			t.Fatal(err)
		}
	}
	data := l.Snapshot()
	for cut := 0; cut < len(data); cut += 7 {
		if _, err := DecodeSnapshot(5, 1, data[:cut]); err == nil && cut > 0 {
			t.Fatalf("snapshot cut at %d of %d decoded", cut, len(data))
		}
	}
	if err := NewLoader(slog.New(slog.DiscardHandler)).Restore(5, 1, data[:len(data)/2]); err == nil {
		t.Fatal("torn snapshot restored")
	}
}
