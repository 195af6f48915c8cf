package sharecoord

import (
	"bufio"
	"context"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/coordinator/runtime"
	"github.com/sluice-io/sluice/internal/coordinator/share"
	"github.com/sluice-io/sluice/internal/testutil"
)

var bg = context.Background()

func batches(bs ...share.StateBatch) []share.StateBatch { return bs }

func sb(first, last int64, state int8, count int16) share.StateBatch {
	return share.StateBatch{FirstOffset: first, LastOffset: last, DeliveryState: state, DeliveryCount: count}
}

// TestLifecycle initializes, writes, reads and deletes share-partition
// state through the coordinator, then loads the log into a new
// coordinator (a new leader epoch) and reads the same state back.
func TestLifecycle(t *testing.T) {
	e := newEnv(t, cluster{stateLeader: self, stateEpoch: 1})
	waitLoaded(t, e.c)

	if r := e.c.InitializeState(bg, initReq("g", 0, 0, 0, 1)); r.Topics[0].Partitions[0].ErrorCode != 0 || r.Topics[0].Partitions[1].ErrorCode != 0 {
		t.Fatalf("initialize: %+v", r.Topics[0].Partitions)
	}
	for i, w := range []struct {
		start int64
		b     []share.StateBatch
	}{
		{0, batches(sb(0, 9, 0, 1))},
		{0, batches(sb(0, 4, 2, 1))},
		{2, batches(sb(8, 12, 4, 2))}, // the third is a snapshot (2 updates per snapshot)
		{2, batches(sb(13, 13, 0, 1))},
	} {
		r := e.c.WriteState(bg, writeReq(1, "g", 0, 0, 3, w.start, w.b...))
		if code := r.Topics[0].Partitions[0].ErrorCode; code != 0 {
			t.Fatalf("write %d: %v", i, kerr.ErrorForCode(code))
		}
	}
	want := "start 2 state epoch 0: 2-4/2/1 5-7/0/1 8-12/4/2 13-13/0/1"
	if got := readState(t, e.c, "g", 0, 0); got != want {
		t.Fatalf("read %q, want %q", got, want)
	}
	// A read with a newer leader epoch is recorded; older ones are fenced.
	if got := readState(t, e.c, "g", 0, 7); got != want {
		t.Fatalf("read at leader epoch 7: %q", got)
	}
	if code := e.c.ReadState(bg, readReq("g", 0, 6)).Topics[0].Partitions[0].ErrorCode; code != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("read at leader epoch 6: %v", kerr.ErrorForCode(code))
	}
	if code := e.c.WriteState(bg, writeReq(1, "g", 0, 0, 6, 2)).Topics[0].Partitions[0].ErrorCode; code != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("write at leader epoch 6: %v", kerr.ErrorForCode(code))
	}
	if r := e.c.DeleteState(bg, deleteReq("g", 1)); r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("delete: %+v", r)
	}
	sum := e.c.ReadStateSummary(bg, summaryReq("g", 1)).Topics[0].Partitions[0]
	if sum.ErrorCode != 0 || sum.StartOffset != -1 {
		t.Fatalf("summary of a deleted partition: %+v", sum)
	}
	sum = e.c.ReadStateSummary(bg, summaryReq("g", 0)).Topics[0].Partitions[0]
	if sum.ErrorCode != 0 || sum.StartOffset != 2 || sum.LeaderEpoch != 7 {
		t.Fatalf("summary: %+v", sum)
	}

	// Failover: a coordinator loading the same log at a new epoch.
	e.c.Close()
	e.setCluster(cluster{stateLeader: self, stateEpoch: 2})
	c2 := e.newCoordinator()
	waitLoaded(t, c2)
	if got := readState(t, c2, "g", 0, 7); got != want {
		t.Fatalf("after load: read %q, want %q", got, want)
	}
	if code := c2.ReadState(bg, readReq("g", 1, 7)).Topics[0].Partitions[0].ErrorCode; code != kerr.InvalidRequest.Code {
		t.Fatalf("read of the deleted partition after load: %v", kerr.ErrorForCode(code))
	}
	if code := c2.WriteState(bg, writeReq(0, "g", 0, 0, 6, 2)).Topics[0].Partitions[0].ErrorCode; code != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("after load, write at leader epoch 6: %v", kerr.ErrorForCode(code))
	}
}

func readState(t *testing.T, c *ShareCoordinator, group string, partition, leaderEpoch int32) string {
	t.Helper()
	p := c.ReadState(bg, readReq(group, partition, leaderEpoch)).Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		t.Fatalf("read: %v", kerr.ErrorForCode(p.ErrorCode))
	}
	var b strings.Builder
	b.WriteString("start " + strconv.FormatInt(p.StartOffset, 10) + " state epoch " + strconv.Itoa(int(p.StateEpoch)) + ":")
	for _, s := range p.StateBatches {
		b.WriteString(" " + strconv.FormatInt(s.FirstOffset, 10) + "-" + strconv.FormatInt(s.LastOffset, 10) + "/" +
			strconv.Itoa(int(s.DeliveryState)) + "/" + strconv.Itoa(int(s.DeliveryCount)))
	}
	return b.String()
}

func TestRuntimeCodes(t *testing.T) {
	e := newEnv(t, cluster{stateLeader: other, stateEpoch: 1})
	if code := e.c.WriteState(bg, writeReq(1, "g", 0, 0, 0, 0)).Topics[0].Partitions[0].ErrorCode; code != kerr.NotCoordinator.Code {
		t.Fatalf("partition led elsewhere: %v", kerr.ErrorForCode(code))
	}
	e.setCluster(cluster{stateLeader: self, stateEpoch: 2}, e.c)
	waitLoaded(t, e.c)
	e.c.InitializeState(bg, initReq("g", 0, 0, 0))
	e.log.SetFail(kerr.NotEnoughReplicas)
	p := e.c.WriteState(bg, writeReq(1, "g", 0, 0, 0, 0, sb(0, 1, 2, 1))).Topics[0].Partitions[0]
	if p.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("failed append: %v", kerr.ErrorForCode(p.ErrorCode))
	}
	e.log.SetFail(nil)
	if got := readState(t, e.c, "g", 0, 0); got != "start 0 state epoch 0:" {
		t.Fatalf("the failed write stayed: %q", got)
	}
	// Unknown topic: the data topic is gone from the image.
	e.setCluster(cluster{stateLeader: self, stateEpoch: 2, noDataTopic: true}, e.c)
	if code := e.c.InitializeState(bg, initReq("g", 0, 0, 0)).Topics[0].Partitions[0].ErrorCode; code != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown topic: %v", kerr.ErrorForCode(code))
	}
	e.c.Close()
	p2 := e.c.ReadState(bg, readReq("g", 0, 0)).Topics[0].Partitions[0]
	if p2.ErrorCode != kerr.CoordinatorNotAvailable.Code || *p2.ErrorMessage != unavailable {
		t.Fatalf("closed: %+v", p2)
	}
}

// TestEmptyRequests: Kafka answers an empty response to a request without
// a group id, topics or partitions.
func TestEmptyRequests(t *testing.T) {
	e := newEnv(t, cluster{stateLeader: self, stateEpoch: 1})
	if r := e.c.WriteState(bg, writeReq(1, "", 0, 0, 0, 0)); len(r.Topics) != 0 {
		t.Fatalf("no group id: %+v", r)
	}
	if r := e.c.InitializeState(bg, initReq("g", 0, 0)); len(r.Topics) != 0 {
		t.Fatalf("no partitions: %+v", r)
	}
}

// TestTopicDeletion: the state of a deleted topic's share partitions is
// deleted.
func TestTopicDeletion(t *testing.T) {
	e := newEnv(t, cluster{stateLeader: self, stateEpoch: 1})
	waitLoaded(t, e.c)
	e.c.InitializeState(bg, initReq("g", 0, 5, 0))
	before := e.log.Appends()
	e.setCluster(cluster{stateLeader: self, stateEpoch: 1, noDataTopic: true}, e.c)
	testutil.Eventually(t, 5*time.Second, func() bool { return e.log.Appends() == before+1 }, "no tombstone appended after the deletion")
	e.setCluster(cluster{stateLeader: self, stateEpoch: 1}, e.c)
	if code := e.c.ReadState(bg, readReq("g", 0, 0)).Topics[0].Partitions[0].ErrorCode; code != kerr.InvalidRequest.Code {
		t.Fatalf("read after the topic's deletion: %v", kerr.ErrorForCode(code))
	}
}

func TestFindCoordinator(t *testing.T) {
	e := newEnv(t, cluster{stateLeader: self, stateEpoch: 1})
	node, code := e.c.FindCoordinator(bg, "g:"+dataTopic.String()+":0", "PLAINTEXT")
	if code != 0 || node != (runtime.Node{NodeID: self, Host: "localhost", Port: 9091}) {
		t.Fatalf("FindCoordinator: %+v %v", node, kerr.ErrorForCode(code))
	}
	for _, bad := range []string{"g", "g:x:0", ":" + dataTopic.String() + ":0", "g:" + dataTopic.String() + ":x", ""} {
		if _, code := e.c.FindCoordinator(bg, bad, "PLAINTEXT"); code != kerr.InvalidRequest.Code {
			t.Errorf("key %q: %v", bad, kerr.ErrorForCode(code))
		}
	}
	// No topic yet: created with Kafka's configs, the replication factor
	// capped at the one live broker and min.insync.replicas at that.
	e2 := newEnv(t, cluster{noStateTopic: true, brokers: []int32{self}})
	if _, code := e2.c.FindCoordinator(bg, "g:"+dataTopic.String()+":0", "PLAINTEXT"); code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("before the topic exists: %v", kerr.ErrorForCode(code))
	}
	want := creation{ShareGroupStateTopic, 1, 1, map[string]string{"cleanup.policy": "delete", "compression.type": "producer",
		"segment.bytes": "104857600", "retention.ms": "-1", "min.insync.replicas": "1"}}
	if len(e2.created.calls) != 1 || !reflect.DeepEqual(e2.created.calls[0], want) {
		t.Fatalf("created %+v, want %+v", e2.created.calls, want)
	}
}

// TestPartitionForGolden maps Kafka's coordinator keys as Kafka does
// (testdata of coordinator/share, written with Kafka's SharePartitionKey
// and Utils.abs(hashCode) % n).
func TestPartitionForGolden(t *testing.T) {
	f, err := os.Open("../share/testdata/keys.golden")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		j := strings.LastIndexByte(line[:i], ' ')
		key, p50, p7 := line[:j], line[j+1:i], line[i+1:]
		k, err := share.ParseCoordinatorKey(key)
		switch {
		case strings.HasPrefix(key, ":"):
			if err == nil {
				t.Errorf("%q: an empty group parsed", key)
			}
			continue
		case err != nil:
			t.Fatalf("%q: %v", key, err)
		case k.CoordinatorKey() != key:
			t.Fatalf("%q prints back as %q", key, k.CoordinatorKey())
		}
		if got := strconv.Itoa(int(runtime.PartitionFor(k.CoordinatorKey(), 50))); got != p50 {
			t.Errorf("%q: partition %s of 50, Kafka %s", key, got, p50)
		}
		if got := strconv.Itoa(int(runtime.PartitionFor(k.CoordinatorKey(), 7))); got != p7 {
			t.Errorf("%q: partition %s of 7, Kafka %s", key, got, p7)
		}
		n++
	}
	if n < 100 {
		t.Fatalf("only %d keys checked", n)
	}
}

// TestPrune: every prune interval the records below the oldest of the
// share partitions' latest snapshots are deleted, once per new offset;
// a coordinator loading the log finds the same offset.
func TestPrune(t *testing.T) {
	e := newEnv(t, cluster{stateLeader: self, stateEpoch: 1})
	waitLoaded(t, e.c)
	// Offsets 0 and 1: the snapshots of partitions 0 and 1; 0 prunes
	// nothing.
	e.c.InitializeState(bg, initReq("g", 0, 0, 0))
	e.c.InitializeState(bg, initReq("g", 0, 0, 1))
	// Partition 0: updates at 2 and 3, then a snapshot at 4 (two updates
	// per snapshot here).
	for range 3 {
		e.c.WriteState(bg, writeReq(1, "g", 0, 0, 0, 0, sb(0, 1, 2, 1)))
	}
	if got := <-e.deleted; got != [2]int64{0, 1} {
		t.Fatalf("pruned %v, want partition 0 below offset 1", got)
	}
	// Partition 1 catches up: a snapshot at 7; partition 0's at 4 holds.
	for range 3 {
		e.c.WriteState(bg, writeReq(1, "g", 1, 0, 0, 0, sb(0, 1, 2, 1)))
	}
	if got := <-e.deleted; got != [2]int64{0, 4} {
		t.Fatalf("pruned %v, want partition 0 below offset 4", got)
	}
	select {
	case got := <-e.deleted:
		t.Fatalf("pruned %v again", got)
	case <-time.After(50 * time.Millisecond):
	}
	e.c.Close()
	e.setCluster(cluster{stateLeader: self, stateEpoch: 2})
	c2 := e.newCoordinator()
	waitLoaded(t, c2)
	if got := <-e.deleted; got != [2]int64{0, 4} {
		t.Fatalf("after load, pruned %v, want partition 0 below offset 4", got)
	}
}
