package api

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/quota"
	"github.com/sluice-io/sluice/internal/records/recordstest"
	"github.com/sluice-io/sluice/internal/replication"
	"github.com/sluice-io/sluice/internal/replication/replicationtest"
	"github.com/sluice-io/sluice/internal/vfs"
)

// TestFetchThrottledAnswersEmpty: a consumer over consumer_byte_rate gets
// an empty answer with throttle_time_ms, its incremental session kept and
// its bytes not counted, and the records once its rate allows them.
func TestFetchThrottledAnswersEmpty(t *testing.T) {
	fsys := vfs.NewMem()
	clk := clock.NewManual(dataTestStart)
	logs := replicationtest.NewMemLogs(fsys, clk)
	rm, err := replication.NewReplicaManager(replication.Options{
		BrokerID: 1, FS: fsys, Logs: logs, Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	delta, image, err := replicationtest.Image(1, replicationtest.Topic{Name: "t", ID: topicTID, Partitions: 2, LeaderEpoch: 3})
	if err != nil {
		t.Fatal(err)
	}
	rm.ApplyDelta(delta, image)
	t.Cleanup(func() { rm.Close(); logs.Close() })
	// 1000 B/s for client "test" (serve's client id).
	quotas := quotaImage(t, map[metadata.QuotaEntity]map[string]float64{
		{ClientID: metadata.QuotaName("test")}: {metadata.QuotaConsumerByteRate: 1000},
	}, nil)
	q := quota.New(quota.Options{Config: quota.DefaultConfig(), Clock: clk, Images: func() *metadata.Image { return quotas }})
	r, err := NewRegistry(BrokerRelease(), RegistryInfo{}, BrokerHandlersWithQuotas(BrokerDeps{
		Data: &DataPlaneDeps{Partitions: rm, FetchSessionCacheSlots: 10, Clock: clk}, Quotas: q,
	}))
	if err != nil {
		t.Fatal(err)
	}
	reply[*kmsg.ProduceResponse](t, r, produceRequest(9, 1, "t", 0, testBatch(t, 3)))
	full := fetch(t, r, fetchRequest(13, 0, 0, 0, 1))
	if full.SessionID == 0 || full.ThrottleMillis != 0 || countRecords(t, full.Topics[0].Partitions[0].RecordBatches) != 3 {
		t.Fatalf("full fetch under the quota: session %d throttle %d", full.SessionID, full.ThrottleMillis)
	}
	sid := full.SessionID
	// 6 KB twice: the second takes the consumer over 10 windows' worth of
	// 1000 B/s. (A batch above that can never be read: Kafka's cap on a
	// consumer's fetch size is the same window's worth.)
	value := make([]byte, 6000)
	six := func() []byte {
		return recordstest.Batch(t, []recordstest.Record{{Timestamp: dataTestStart.UnixMilli(), Value: value}})
	}
	reply[*kmsg.ProduceResponse](t, r, produceRequest(9, 1, "t", 0, six()))
	inc := fetchRequest(13, sid, 1, 0)
	inc.Topics[0].Partitions[0].FetchOffset = 3
	if got := fetch(t, r, inc); got.ThrottleMillis != 0 || len(got.Topics) != 1 {
		t.Fatalf("first 6 KB: throttle %d, %d topics", got.ThrottleMillis, len(got.Topics))
	}
	reply[*kmsg.ProduceResponse](t, r, produceRequest(9, 1, "t", 0, six()))
	// The consumer moves to offset 4 in the same request: a throttled
	// answer keeps that in the session, as Kafka's newContext does.
	inc = fetchRequest(13, sid, 2, 0)
	inc.Topics[0].Partitions[0].FetchOffset = 4
	got := fetch(t, r, inc)
	throttled := 0
	for epoch := int32(3); got.ThrottleMillis > 0; epoch++ {
		if got.SessionID != sid || len(got.Topics) != 0 || got.ErrorCode != 0 {
			t.Fatalf("throttled answer: session %d (want %d), %d topics, code %d", got.SessionID, sid, len(got.Topics), got.ErrorCode)
		}
		throttled++
		if throttled > 10 {
			t.Fatal("still throttled after 10 waits")
		}
		clk.Advance(time.Duration(got.ThrottleMillis) * time.Millisecond)
		got = fetch(t, r, fetchRequest(13, sid, epoch))
	}
	if throttled == 0 {
		t.Fatal("12 KB in a 10 s window of 1000 B/s was not throttled")
	}
	if len(got.Topics) != 1 || countRecords(t, got.Topics[0].Partitions[0].RecordBatches) != 1 {
		t.Fatalf("after the throttles: %+v", got.Topics)
	}
}
