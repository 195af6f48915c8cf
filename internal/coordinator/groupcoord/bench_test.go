package groupcoord

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/coordinator/runtime/runtimetest"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// BenchmarkCommitOffsets measures the coordinator alone (in-memory log):
// 10 clients, each committing one partition of its own group in a loop.
//
//	go test -run XXX -bench CommitOffsets ./internal/coordinator/groupcoord
func BenchmarkCommitOffsets(b *testing.B) {
	log := runtimetest.NewMemLog()
	image := offsetsImage(b, 3, testNode, 0)
	c, err := New(Options{NodeID: testNode, Group: group.DefaultConfig(), NumPartitions: 3, Writer: log,
		Image: func() *metadata.Image { return image }})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	c.ApplyImage(image)
	ctx := context.Background()
	const clients = 10
	for i := range clients {
		for {
			if _, code := c.FetchOffsets(ctx, fmt.Sprintf("g%d", i), nil, false); code == 0 {
				break
			}
		}
	}
	b.ResetTimer()
	var wg sync.WaitGroup
	per := b.N/clients + 1
	for i := range clients {
		wg.Go(func() {
			req := group.CommitRequest{GroupID: fmt.Sprintf("g%d", i), GenerationID: -1,
				Partitions: []group.CommitPartition{{TP: kafka.TopicPartition{Topic: "t"}, LeaderEpoch: -1}}}
			for n := range per {
				req.Partitions[0].Offset = int64(n)
				if res := c.CommitOffsets(ctx, req); res.Errors[0] != 0 {
					b.Errorf("commit: %d", res.Errors[0])
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(per*clients)/b.Elapsed().Seconds(), "commits/s")
}
