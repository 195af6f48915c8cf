package metrics

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/testutil"
)

// newClient is a franz-go client of addrs with opts; closed at the end of
// the test.
func newClient(t *testing.T, addrs []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addrs...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// createTopic creates topic, retrying while the cluster is still coming
// up; TOPIC_ALREADY_EXISTS after a retry means an earlier attempt created it.
func createTopic(t *testing.T, adm *kadm.Client, topic string, partitions int32, rf int16, configs map[string]*string) {
	t.Helper()
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := adm.CreateTopic(ctx, partitions, rf, configs, topic)
		if err != nil {
			return err
		}
		if errors.Is(resp.Err, kerr.TopicAlreadyExists) {
			return nil // a retry after a create whose answer was lost
		}
		return resp.Err
	}, "create topic %s", topic)
}

// produce writes n records of valueSize bytes to topic with acks=all.
func produce(t *testing.T, cl *kgo.Client, topic string, n, valueSize int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	value := make([]byte, valueSize)
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: topic, Key: []byte(fmt.Sprintf("key-%d", i)), Value: value}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce %d records to %s: %v", n, topic, err)
	}
}

// batchHeaderSize is a record batch v2's header, which franz-go's batch
// metrics leave out.
const batchHeaderSize = 61

// batchBytes is a kgo hook that counts the bytes of the record batches a
// client wrote: what Kafka's BytesInPerSec counts, each batch's header
// plus its records.
type batchBytes struct {
	mu             sync.Mutex
	bytes, batches int64
}

// OnProduceBatchWritten is kgo's hook: a batch was written to a broker.
func (b *batchBytes) OnProduceBatchWritten(_ kgo.BrokerMetadata, _ string, _ int32, m kgo.ProduceBatchMetrics) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.bytes += int64(m.CompressedBytes) + batchHeaderSize
	b.batches++
}

// total is the bytes and batches written so far.
func (b *batchBytes) total() (bytes, batches int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.bytes, b.batches
}

// consumeAndCommit reads want records of topic in group (the KIP-848
// consumer protocol when serverSide) and commits what it read.
func consumeAndCommit(t *testing.T, addrs []string, group, topic string, want int, serverSide bool) {
	t.Helper()
	opts := []kgo.Opt{kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}
	if serverSide {
		opts = append(opts, kgo.ServerSideBalancer())
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addrs...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for got := 0; got < want; {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("group %s read %d of %d records: %v", group, got, want, err)
		}
		fetches.EachError(func(topic string, p int32, err error) {
			t.Logf("group %s fetch %s-%d: %v", group, topic, p, err)
		})
		got += fetches.NumRecords()
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("group %s commit: %v", group, err)
	}
}
