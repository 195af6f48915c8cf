package sharefetch

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/broker/sharepersist"
	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/replication"
)

var testTopicID = kafka.UUID{9}

// fakeLog is one partition holding a read's records at offsets 0..end-1.
type fakeLog struct {
	rr  commitlog.ReadResult
	end int64
}

func (l *fakeLog) Fetch(_ context.Context, _ replication.FetchParams, parts []replication.FetchPartition) []replication.FetchPartitionResult {
	out := make([]replication.FetchPartitionResult, len(parts))
	for i, p := range parts {
		out[i].TP = p.TP
		out[i].ReadResult = replication.ReadResult{HighWatermark: l.end, LastStableOffset: l.end, LogEndOffset: l.end}
		if p.FetchOffset < l.end {
			out[i].Records = l.rr
		}
	}
	return out
}

func (l *fakeLog) ListOffset(_ kafka.TopicPartition, ts int64, _ replication.Isolation, _ int32, _ bool) (replication.OffsetAnswer, error) {
	if ts == kafka.ListOffsetsEarliest {
		return replication.OffsetAnswer{Offset: 0}, nil
	}
	return replication.OffsetAnswer{Offset: l.end}, nil
}

// memPersister keeps written states; a partition never written reads as
// initialized without state.
type memPersister struct {
	mu     sync.Mutex
	writes int
}

func (p *memPersister) Read(context.Context, sharepersist.Key, int32) (sharepersist.State, error) {
	return sharepersist.State{StartOffset: -1}, nil
}

func (p *memPersister) Write(context.Context, sharepersist.Key, sharepersist.Write) error {
	p.mu.Lock()
	p.writes++
	p.mu.Unlock()
	return nil
}

func testImage(t *testing.T) *metadata.Image {
	t.Helper()
	d := metadata.NewDelta(metadata.EmptyImage())
	recs := []metadata.Record{
		&metadata.RegisterBrokerRecord{BrokerID: 1, BrokerEpoch: 1, Endpoints: []metadata.Endpoint{{Name: "PLAINTEXT", Host: "localhost", Port: 9092}}},
		&metadata.TopicRecord{Name: "work", TopicID: testTopicID},
		&metadata.PartitionRecord{TopicID: testTopicID, Partition: 0, Replicas: []int32{1}, ISR: []int32{1}, Leader: 1},
	}
	for i, r := range recs {
		if err := d.Replay(int64(i), 1, r); err != nil {
			t.Fatal(err)
		}
	}
	return d.Apply()
}

func shareFetchReq(member string, epoch int32) *kmsg.ShareFetchRequest {
	req := kmsg.NewPtrShareFetchRequest()
	req.SetVersion(1)
	req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr("g"), kmsg.StringPtr(member), epoch
	req.MaxBytes, req.MaxRecords, req.BatchSize = 1<<20, 500, 500
	t := kmsg.NewShareFetchRequestTopic()
	t.TopicID = testTopicID
	t.Partitions = append(t.Partitions, kmsg.NewShareFetchRequestTopicPartition())
	req.Topics = append(req.Topics, t)
	return req
}

func acquiredOf(resp *kmsg.ShareFetchResponse) []kmsg.ShareFetchResponseTopicPartitionAcquiredRecord {
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			return p.AcquiredRecords
		}
	}
	return nil
}

// TestLocksExpireAtTheirDeadline: a lock ends when it runs out, not at the
// expiry loop's next round (here an hour away), so another member gets the
// record again (Kafka arms a timer per acquisition).
func TestLocksExpireAtTheirDeadline(t *testing.T) {
	rr, _ := logRead(t, 5, 1)
	clk := clock.NewManual(time.Unix(1000, 0))
	im := testImage(t)
	settings := DefaultGroupSettings()
	settings.AutoOffsetReset = config.ShareAutoOffsetReset{Strategy: config.ResetEarliest}
	m := New(Options{
		NodeID: 1, Image: func() *metadata.Image { return im }, Log: &fakeLog{rr: rr, end: 5}, Persister: &memPersister{},
		Group: func(string) GroupSettings { return settings }, Clock: clk, ExpiryInterval: time.Hour,
	})
	defer m.Close()
	ctx := context.Background()
	allow := func(string) bool { return true }

	got := acquiredOf(m.ShareFetch(ctx, shareFetchReq("a", 0), "ca", allow))
	if len(got) != 1 || got[0].FirstOffset != 0 || got[0].LastOffset != 4 || got[0].DeliveryCount != 1 {
		t.Fatalf("a acquired %+v, want 0-4 once", got)
	}
	if got := acquiredOf(m.ShareFetch(ctx, shareFetchReq("b", 0), "cb", allow)); len(got) != 0 {
		t.Fatalf("b acquired %+v while a holds the records", got)
	}
	// The loop re-arms at the lock's deadline after the acquisition; give
	// it a moment to, then let the lock run out.
	time.Sleep(20 * time.Millisecond)
	clk.Advance(settings.Partition.RecordLockDuration)
	epoch, got := int32(1), nil
	for deadline := time.Now().Add(5 * time.Second); len(got) == 0 && time.Now().Before(deadline); epoch++ {
		time.Sleep(10 * time.Millisecond)
		got = acquiredOf(m.ShareFetch(ctx, shareFetchReq("b", epoch), "cb", allow))
	}
	if len(got) != 1 || got[0].FirstOffset != 0 || got[0].LastOffset != 4 || got[0].DeliveryCount != 2 {
		t.Fatalf("after a's lock ran out b acquired %+v, want 0-4 delivered a second time", got)
	}
}
