package replication

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/records"
)

// leaderOf3 makes broker 1 lead t-0 with replicas and ISR [1 2 3] at
// leader epoch 6, partition epoch 0, with 10 records in its log and
// the high watermark at 0 (no follower has fetched).
func leaderOf3(t *testing.T) (*fixture, *Partition) {
	f := newFixture(t, nil)
	p, _ := f.rm.Partition(tp("t", 0))
	if _, err := p.applyState(metadata.PartitionState{Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}, Leader: 1, LeaderEpoch: 6}); err != nil {
		t.Fatal(err)
	}
	f.produce(t, 1, AppendPartition{TP: tp("t", 0), Records: batch(t, 10, testStart.UnixMilli())})
	return f, p
}

func TestHighWatermarkIsSmallestISRLogEndOffset(t *testing.T) {
	_, p := leaderOf3(t)
	hw := p.HighWatermark()
	if _, _, err := p.UpdateFollowerFetchState(2, -1, 10); err != nil {
		t.Fatal(err)
	}
	if p.HighWatermark() != hw {
		t.Fatalf("high watermark moved to %d while follower 3's position is unknown", p.HighWatermark())
	}
	if _, _, err := p.UpdateFollowerFetchState(3, -1, 7); err != nil {
		t.Fatal(err)
	}
	if p.HighWatermark() != 7 {
		t.Fatalf("high watermark %d, want 7 (follower 3's log end offset)", p.HighWatermark())
	}
	// A follower going back (it truncated) never moves the watermark back.
	if _, _, err := p.UpdateFollowerFetchState(3, -1, 4); err != nil {
		t.Fatal(err)
	}
	if p.HighWatermark() != 7 {
		t.Fatalf("high watermark went back to %d", p.HighWatermark())
	}
	if _, _, err := p.UpdateFollowerFetchState(9, -1, 10); err == nil {
		t.Fatal("a replica outside the assignment was accepted")
	}
}

func TestISRShrinksAfterLagAndExpandsWhenCaughtUp(t *testing.T) {
	f, p := leaderOf3(t)
	lagMs := int64(30000)
	if _, _, err := p.UpdateFollowerFetchState(2, -1, 10); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.UpdateFollowerFetchState(3, -1, 5); err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(20 * time.Second)
	if change := p.shrinkIfLagging(lagMs); change != nil {
		t.Fatalf("shrank before replica.lag.time.max.ms: %+v", change)
	}
	// Follower 2 keeps fetching at the end; follower 3 stays behind.
	f.clk.Advance(15 * time.Second)
	if _, _, err := p.UpdateFollowerFetchState(2, -1, 10); err != nil {
		t.Fatal(err)
	}
	change := p.shrinkIfLagging(lagMs)
	if change == nil || !slices.Equal(change.NewISR, []int32{1, 2}) || change.LeaderEpoch != 6 || change.PartitionEpoch != 0 {
		t.Fatalf("shrink: %+v, want ISR [1 2] at leader epoch 6, partition epoch 0", change)
	}
	// Until the controller answers, no second change, and the watermark
	// still waits for follower 3 (maximal ISR).
	if again := p.shrinkIfLagging(lagMs); again != nil {
		t.Fatalf("second change while one is in flight: %+v", again)
	}
	if p.HighWatermark() != 5 {
		t.Fatalf("high watermark %d during the shrink, want 5", p.HighWatermark())
	}
	// A refused change lifts the in-flight mark.
	p.isrChangeDone(*change, 0, errors.New("controller unreachable"))
	if again := p.shrinkIfLagging(lagMs); again == nil {
		t.Fatal("no retry after a failed change")
	}
	// The controller's record arrives: the ISR is [1 2], the watermark
	// follows follower 2 alone.
	if _, err := p.applyState(metadata.PartitionState{Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2}, Leader: 1, LeaderEpoch: 6, PartitionEpoch: 1}); err != nil {
		t.Fatal(err)
	}
	if p.HighWatermark() != 10 {
		t.Fatalf("high watermark %d after the shrink, want 10", p.HighWatermark())
	}
	// Follower 3 catches up to the watermark: expansion is proposed once.
	_, change, err := p.UpdateFollowerFetchState(3, -1, 9)
	if err != nil || change != nil {
		t.Fatalf("expansion below the high watermark: %+v %v", change, err)
	}
	_, change, err = p.UpdateFollowerFetchState(3, 31, 10)
	if err != nil || change == nil || !slices.Equal(change.NewISR, []int32{1, 2, 3}) || change.PartitionEpoch != 1 {
		t.Fatalf("expansion: %+v %v, want ISR [1 2 3] at partition epoch 1", change, err)
	}
	// KIP-903: the new member goes with the broker epoch of the fetch that
	// earned it, so the controller can refuse a replica restarted since.
	var sent []int64
	for _, m := range change.AlterPartitionRequest(1, 11).Topics[0].Partitions[0].NewEpochISR {
		sent = append(sent, m.BrokerEpoch)
	}
	if !slices.Equal(sent, []int64{-1, -1, 31}) {
		t.Fatalf("AlterPartition member epochs %v, want [-1 -1 31] (only follower 3's fetch named one)", sent)
	}
	if _, again, _ := p.UpdateFollowerFetchState(3, 31, 10); again != nil {
		t.Fatal("expansion proposed twice")
	}
	// Answered "nothing changed" (same partition epoch): the mark lifts.
	p.isrChangeDone(*change, 1, nil)
	if _, again, _ := p.UpdateFollowerFetchState(3, -1, 10); again == nil {
		t.Fatal("no new proposal after an answer that changed nothing")
	}
}

func TestFollowerTruncatesToDivergingEpoch(t *testing.T) {
	f := newFixture(t, nil)
	p, _ := f.rm.Partition(tp("t", 0))
	// Epoch 5 writes offsets 0-9 as leader (batches of 2), then the broker
	// follows 2.
	for range 5 {
		f.produce(t, 1, AppendPartition{TP: tp("t", 0), Records: batch(t, 2, testStart.UnixMilli())})
	}
	if _, err := p.applyState(metadata.PartitionState{Replicas: []int32{1, 2}, ISR: []int32{1, 2}, Leader: 2, LeaderEpoch: 7}); err != nil {
		t.Fatal(err)
	}
	pos, ok := p.followerPosition()
	if !ok || pos.fetchOffset != 10 || pos.lastFetchedEpoch != 5 || pos.leaderEpoch != 7 || pos.leaderID != 2 {
		t.Fatalf("fetch position %+v", pos)
	}
	// The new leader ended epoch 5 at offset 6.
	leo, err := p.truncateForDivergence(7, EpochEndOffset{Epoch: 5, EndOffset: 6})
	if err != nil || leo != 6 {
		t.Fatalf("truncated to %d (%v), want 6", leo, err)
	}
	// An answer for an older leader epoch changes nothing.
	if leo, _ := p.truncateForDivergence(6, EpochEndOffset{Epoch: 5, EndOffset: 2}); leo != 6 {
		t.Fatalf("stale answer truncated to %d", leo)
	}
	// The leader's batches at 6.. are appended as they are.
	data := batch(t, 3, testStart.UnixMilli())
	records.SetBaseOffset(data, 6)
	records.SetPartitionLeaderEpoch(data, 7)
	if err := p.appendAsFollower(7, data, 8, 0); err != nil {
		t.Fatal(err)
	}
	st := p.State()
	if st.LogEndOffset != 9 || st.HighWatermark != 8 {
		t.Fatalf("after append: log end %d, high watermark %d; want 9 and 8", st.LogEndOffset, st.HighWatermark)
	}
	// The same batch again (a retried fetch) is skipped.
	if err := p.appendAsFollower(7, data, 9, 0); err != nil {
		t.Fatal(err)
	}
	if st := p.State(); st.LogEndOffset != 9 || st.HighWatermark != 9 {
		t.Fatalf("after the retry: %+v", st)
	}
	// Out of range ahead of the leader's end: cut to it.
	if err := p.truncateAfterOutOfRange(7, 0, 6); err != nil {
		t.Fatal(err)
	}
	if st := p.State(); st.LogEndOffset != 6 || st.HighWatermark != 6 {
		t.Fatalf("after out of range: %+v", st)
	}
	// Behind the leader's log start: restart there.
	if err := p.truncateAfterOutOfRange(7, 50, 60); err != nil {
		t.Fatal(err)
	}
	if st := p.State(); st.LogStartOffset != 50 || st.LogEndOffset != 50 {
		t.Fatalf("after restart at the leader's log start: %+v", st)
	}
}
