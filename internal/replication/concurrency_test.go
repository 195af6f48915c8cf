package replication

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/replication/replicationtest"
)

// TestConcurrentProduceFetchAndLeaderEpochs races acks=all producers,
// long-polling consumers and leader epoch changes on one partition: every
// acknowledged record must be readable, at the offset it was acknowledged
// at, and consumers must see offsets without gaps.
func TestConcurrentProduceFetchAndLeaderEpochs(t *testing.T) {
	f := newFixture(t, nil)
	const producers, perProducer = 4, 40
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	tmpl := batch(t, 2, testStart.UnixMilli())
	var acked atomic.Int64
	var wg sync.WaitGroup
	for range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range perProducer {
				res := f.rm.AppendRecords(ctx, AppendRequest{RequiredAcks: -1, Timeout: 10 * time.Second, ProduceVersion: 11,
					Partitions: []AppendPartition{{TP: tp("t", 0), Records: append([]byte(nil), tmpl...)}}})
				if res[0].Err != nil {
					t.Errorf("produce: %v", res[0].Err)
					return
				}
				acked.Add(2)
			}
		}()
	}

	// The controller keeps re-electing this broker with a new epoch.
	epochsDone := make(chan struct{})
	go func() {
		defer close(epochsDone)
		for i := range 20 {
			d := metadata.NewDelta(f.rm.Image())
			if err := d.Replay(int64(1000+i), 2, &metadata.PartitionChangeRecord{TopicID: replicationtest.TopicID(1), Partition: 0,
				Leader: 1, Replicas: []int32{1}, ISR: []int32{1}}); err != nil {
				t.Errorf("replay: %v", err)
				return
			}
			f.rm.ApplyDelta(d, d.Apply())
			time.Sleep(time.Millisecond) // spreads the epoch changes over the traffic
		}
	}()

	// A consumer follows the log with long polls.
	var consumed atomic.Int64
	consumerDone := make(chan struct{})
	go func() {
		defer close(consumerDone)
		next := int64(0)
		for next < producers*perProducer*2 {
			out := f.rm.Fetch(ctx, FetchParams{ReplicaID: -1, MaxBytes: 1 << 20, MinBytes: 1, MaxWait: 5 * time.Second},
				[]FetchPartition{{TP: tp("t", 0), FetchOffset: next, CurrentLeaderEpoch: -1, LastFetchedEpoch: -1, MaxBytes: 1 << 20}})
			if ctx.Err() != nil {
				return
			}
			if out[0].Err != nil {
				t.Errorf("fetch at %d: %v", next, out[0].Err)
				return
			}
			data, err := out[0].Records.Bytes()
			if err != nil {
				t.Errorf("read slices: %v", err)
				return
			}
			if _, err := records.Batches(data, func(h records.Header, _ []byte) error {
				if h.BaseOffset > next {
					t.Errorf("gap: batch at %d, expected %d", h.BaseOffset, next)
				}
				if h.NextOffset() > next {
					next = h.NextOffset()
				}
				return nil
			}); err != nil {
				t.Errorf("batches: %v", err)
				return
			}
			consumed.Store(next)
		}
	}()

	wg.Wait()
	<-epochsDone
	select {
	case <-consumerDone:
	case <-time.After(20 * time.Second):
		cancel()
		<-consumerDone
		t.Fatalf("consumer stuck at %d of %d", consumed.Load(), acked.Load())
	}
	p, _ := f.rm.Partition(tp("t", 0))
	st := p.State()
	if st.LogEndOffset != acked.Load() || st.HighWatermark != acked.Load() || consumed.Load() != acked.Load() {
		t.Fatalf("acked %d, LEO %d, HW %d, consumed %d", acked.Load(), st.LogEndOffset, st.HighWatermark, consumed.Load())
	}
	if st.LeaderEpoch != 25 {
		t.Fatalf("leader epoch %d after 20 elections from 5, want 25", st.LeaderEpoch)
	}
}
