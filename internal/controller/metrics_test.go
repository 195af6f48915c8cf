package controller

import (
	"testing"

	"github.com/sluice-io/sluice/internal/metadata"
)

// TestMeasureImage counts brokers by fencing and partitions by leader as
// Kafka's ControllerMetricsChanges does.
func TestMeasureImage(t *testing.T) {
	recs := []metadata.Record{
		&metadata.RegisterBrokerRecord{BrokerID: 1, IncarnationID: testID(1), BrokerEpoch: 1},
		&metadata.RegisterBrokerRecord{BrokerID: 2, IncarnationID: testID(2), BrokerEpoch: 2, Fenced: true},
		&metadata.RegisterBrokerRecord{BrokerID: 3, IncarnationID: testID(3), BrokerEpoch: 3, Fenced: true},
		&metadata.TopicRecord{Name: "a", TopicID: testID(10)},
		// Led by its preferred replica.
		&metadata.PartitionRecord{TopicID: testID(10), Partition: 0, Replicas: []int32{1, 2}, ISR: []int32{1}, Leader: 1},
		// Led by another replica: imbalanced.
		&metadata.PartitionRecord{TopicID: testID(10), Partition: 1, Replicas: []int32{2, 1}, ISR: []int32{1}, Leader: 1},
		&metadata.TopicRecord{Name: "b", TopicID: testID(11)},
		// No leader: offline and imbalanced.
		&metadata.PartitionRecord{TopicID: testID(11), Partition: 0, Replicas: []int32{3}, ISR: []int32{3}, Leader: -1},
	}
	im := replayAll(t, metadata.EmptyImage(), 0, append(metadata.BootstrapRecords("c1", 1), recs...))
	got := MeasureImage(im)
	want := ImageMetrics{FencedBrokers: 2, ActiveBrokers: 1, Topics: 2, Partitions: 3, Offline: 1, NotPreferred: 2}
	if got != want {
		t.Fatalf("MeasureImage = %+v, want %+v", got, want)
	}
	if got := MeasureImage(metadata.EmptyImage()); got != (ImageMetrics{}) {
		t.Fatalf("empty image: %+v", got)
	}
}
