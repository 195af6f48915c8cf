package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/testbin"
)

// BenchmarkTransactionsInARow measures one franz-go transactional
// producer committing small transactions one after another against a real
// single node: begin, one record to each of two partitions, commit. Each
// op is one transaction. Under Transactions V2 the next transaction's
// first produce adds its partitions while the previous one's markers may
// still be written, which the broker must ride out itself (Kafka retries
// CONCURRENT_TRANSACTIONS, add.partitions.to.txn.retry.backoff.ms) rather
// than send the producer into its retry backoff.
//
//	go test ./test/integration -run '^$' -bench 'TransactionsInARow$' -benchtime 200x
func BenchmarkTransactionsInARow(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	addr := testbin.StartServer(b, binaryPath, testbin.ServerConfig{DataDir: b.TempDir()}).Addr()
	const topic = "txn-in-a-row"
	adm := kadm.NewClient(newClientTB(b, addr))
	if created, err := adm.CreateTopics(ctx, 2, 1, nil, topic); err != nil || created[topic].Err != nil {
		b.Fatalf("create topic: %v %+v", err, created)
	}
	producer := newClientTB(b, addr, kgo.TransactionalID("in-a-row"), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	transaction := func(n int) {
		if err := producer.BeginTransaction(); err != nil {
			b.Fatalf("begin: %v", err)
		}
		for p := range int32(2) {
			rec := &kgo.Record{Value: fmt.Appendf(nil, "%d", n), Partition: p}
			if err := producer.ProduceSync(ctx, rec).FirstErr(); err != nil {
				b.Fatalf("produce in transaction %d: %v", n, err)
			}
		}
		if err := producer.EndTransaction(ctx, kgo.TryCommit); err != nil {
			b.Fatalf("commit transaction %d: %v", n, err)
		}
	}
	transaction(-1) // the producer id, the coordinator and its partition
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		transaction(i)
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(took)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(b.Elapsed())/float64(b.N), "ms/txn")
	b.ReportMetric(ms(took[len(took)/2]), "p50-ms")
	b.ReportMetric(ms(took[len(took)-1]), "max-ms")
	slow := 0
	for _, d := range took {
		if d >= time.Second {
			slow++
		}
	}
	b.ReportMetric(float64(slow), "over-1s")
}
