package metadata

import (
	"fmt"
	"testing"

	"github.com/sluice-io/sluice/internal/kafka"
)

// benchImage builds an image with n topics of 10 partitions each.
func benchImage(b *testing.B, n int) *Image {
	d := NewDelta(EmptyImage())
	for i := range n {
		id := kafka.UUID{byte(i >> 16), byte(i >> 8), byte(i), 1}
		if err := d.Replay(int64(i), 1, &TopicRecord{Name: fmt.Sprintf("t%d", i), TopicID: id}); err != nil {
			b.Fatal(err)
		}
		for p := range int32(10) {
			if err := d.Replay(int64(i), 1, &PartitionRecord{TopicID: id, Partition: p, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}, Leader: 1}); err != nil {
				b.Fatal(err)
			}
		}
	}
	return d.Apply()
}

// BenchmarkApplyOneChange measures publishing one ISR change on an image of 2000 topics
// (copy-on-write of the topic maps).
func BenchmarkApplyOneChange(b *testing.B) {
	im := benchImage(b, 2000)
	id := kafka.UUID{0, 0, 7, 1}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d := NewDelta(im)
		if err := d.Replay(im.Offset()+1, 1, &PartitionChangeRecord{TopicID: id, Partition: 3, Leader: NoLeaderChange, ISR: []int32{1, 2}}); err != nil {
			b.Fatal(err)
		}
		_ = d.Apply()
	}
}

func BenchmarkDecodeRecords(b *testing.B) {
	data := EncodeRecords(sampleRecords())
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		if _, err := DecodeRecords(data); err != nil {
			b.Fatal(err)
		}
	}
}
