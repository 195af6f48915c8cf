package replication

import (
	"errors"
	"io/fs"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/replication/replicationtest"
)

// applyChange replays one partition change onto the manager's image and
// applies it as the metadata publisher would.
func (f *fixture) applyChange(t *testing.T, rec *metadata.PartitionChangeRecord) {
	t.Helper()
	d := metadata.NewDelta(f.rm.Image())
	if err := d.Replay(f.rm.Image().Offset()+1, 2, rec); err != nil {
		t.Fatal(err)
	}
	f.rm.ApplyDelta(d, d.Apply())
}

// TestReassignmentMovesPartitionOffThisBroker follows a move of t-1 from
// broker 1 (the leader here) to broker 2, as the controller's records
// drive it: while the replicas grow to both, broker 1 leads and tracks 2,
// whose catch-up yields the ISR expansion the controller completes the
// move with; the completing change leaves broker 1 out, and it drops the
// partition and deletes its log.
func TestReassignmentMovesPartitionOffThisBroker(t *testing.T) {
	f := newFixture(t, nil)
	res := f.produce(t, 1, AppendPartition{TP: tp("t", 1), Records: batch(t, 3, testStart.UnixMilli())})
	wantCode(t, "produce", res[0].Err, nil)

	f.applyChange(t, &metadata.PartitionChangeRecord{TopicID: replicationtest.TopicID(1), Partition: 1, Leader: metadata.NoLeaderChange,
		Replicas: []int32{2, 1}, AddingReplicas: []int32{2}, RemovingReplicas: []int32{1}})
	p, err := f.rm.Partition(tp("t", 1))
	if err != nil {
		t.Fatal(err)
	}
	if st := p.State(); st.Role != RoleLeader || !slices.Equal(st.Replicas, []int32{2, 1}) {
		t.Fatalf("while adding: %+v", st)
	}
	_, change, err := p.UpdateFollowerFetchState(2, -1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if change == nil || !slices.Equal(change.NewISR, []int32{1, 2}) {
		t.Fatalf("caught-up adding replica: ISR change %+v, want [1 2]", change)
	}

	if _, err := f.logs.FS.Stat("/data/t-1"); err != nil {
		t.Fatalf("log dir before the move completes: %v", err)
	}
	f.applyChange(t, &metadata.PartitionChangeRecord{TopicID: replicationtest.TopicID(1), Partition: 1, Leader: 2,
		Replicas: []int32{2}, ISR: []int32{2}, AddingReplicas: []int32{}, RemovingReplicas: []int32{}})
	_, err = f.rm.Partition(tp("t", 1))
	wantCode(t, "partition after the move", err, kerr.NotLeaderForPartition)
	if _, err := f.logs.FS.Stat("/data/t-1"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("log dir after the move: %v, want it deleted", err)
	}
	if _, err := f.rm.Partition(tp("t", 0)); err != nil {
		t.Fatalf("another partition of the topic went with it: %v", err)
	}
}

// TestReassignmentAddsThisBroker: a partition led elsewhere gains broker 1
// as an adding replica; broker 1 opens it and follows the leader.
func TestReassignmentAddsThisBroker(t *testing.T) {
	f := newFixture(t, nil)
	f.applyChange(t, &metadata.PartitionChangeRecord{TopicID: replicationtest.TopicID(2), Partition: 0, Leader: 3,
		Replicas: []int32{3}, ISR: []int32{3}})
	_, err := f.rm.Partition(tp("c", 0))
	wantCode(t, "partition moved away", err, kerr.NotLeaderForPartition)

	f.applyChange(t, &metadata.PartitionChangeRecord{TopicID: replicationtest.TopicID(2), Partition: 0, Leader: metadata.NoLeaderChange,
		Replicas: []int32{1, 3}, AddingReplicas: []int32{1}, RemovingReplicas: []int32{}})
	p, err := f.rm.Partition(tp("c", 0))
	if err != nil {
		t.Fatalf("adding replica not hosted: %v", err)
	}
	if st := p.State(); st.Role != RoleFollower || st.LeaderID != 3 {
		t.Fatalf("adding replica: %+v, want a follower of 3", st)
	}
}
