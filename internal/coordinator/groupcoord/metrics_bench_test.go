package groupcoord

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/coordinator/runtime/runtimetest"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// BenchmarkMetricsScrape gathers the group metrics and lag of a
// coordinator holding 10,000 committed offsets (100 groups of 100
// partitions), every high watermark known.
//
//	go test -run XXX -bench MetricsScrape ./internal/coordinator/groupcoord
func BenchmarkMetricsScrape(b *testing.B) {
	image := offsetsImage(b, 3, testNode, 0)
	c, err := New(Options{NodeID: testNode, Group: group.DefaultConfig(), NumPartitions: 3, Writer: runtimetest.NewMemLog(),
		Image: func() *metadata.Image { return image }})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	c.ApplyImage(image)
	ctx := context.Background()
	const groups, partitions = 100, 100
	for g := range groups {
		req := group.CommitRequest{GroupID: fmt.Sprintf("g%d", g), GenerationID: -1}
		for p := range partitions {
			req.Partitions = append(req.Partitions, group.CommitPartition{TP: kafka.TopicPartition{Topic: fmt.Sprintf("t%d", p%10), Partition: int32(p)}, Offset: 5, LeaderEpoch: -1})
		}
		for {
			res := c.CommitOffsets(ctx, req)
			if res.Errors[0] == 0 {
				break
			}
		}
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewMetricsCollector(c, func(_ context.Context, tps []kafka.TopicPartition) map[kafka.TopicPartition]int64 {
		out := make(map[kafka.TopicPartition]int64, len(tps))
		for _, tp := range tps {
			out[tp] = 10
		}
		return out
	}, 5*time.Second))
	b.ResetTimer()
	for b.Loop() {
		mfs, err := reg.Gather()
		if err != nil {
			b.Fatal(err)
		}
		if n := len(mfs); n == 0 {
			b.Fatal("nothing gathered")
		}
	}
}
