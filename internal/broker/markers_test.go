package broker

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/records/recordstest"
	"github.com/sluice-io/sluice/internal/replication"
	"github.com/sluice-io/sluice/internal/replication/replicationtest"
	"github.com/sluice-io/sluice/internal/vfs"
)

// fakeGroups records CompleteTransaction calls.
type fakeGroups struct {
	mu    sync.Mutex
	calls []string
}

func (g *fakeGroups) CompleteTransaction(_ context.Context, producerID int64, partitions []int32, commit bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls = append(g.calls, txnCall(producerID, partitions, commit))
}

func txnCall(producerID int64, partitions []int32, commit bool) string {
	return fmt.Sprintf("producer %d partitions %v commit %t", producerID, partitions, commit)
}

func markerRig(t *testing.T) (*replication.ReplicaManager, *clock.Manual) {
	t.Helper()
	fsys := vfs.NewMem()
	clk := clock.NewManual(time.UnixMilli(1_700_000_000_000))
	logs := replicationtest.NewMemLogs(fsys, clk)
	rm, err := replication.NewReplicaManager(replication.Options{BrokerID: 1, FS: fsys, Logs: logs, Clock: clk,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	delta, image, err := replicationtest.Image(1,
		replicationtest.Topic{Name: "t", ID: replicationtest.TopicID(1), Partitions: 1},
		replicationtest.Topic{Name: "__consumer_offsets", ID: replicationtest.TopicID(2), Partitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	rm.ApplyDelta(delta, image)
	t.Cleanup(func() {
		rm.Close()
		if err := logs.Close(); err != nil {
			t.Error(err)
		}
	})
	return rm, clk
}

func openTxn(t *testing.T, rm *replication.ReplicaManager, origin replication.AppendOrigin, tps ...kafka.TopicPartition) {
	t.Helper()
	for _, tp := range tps {
		b := recordstest.Batch(t, recordstest.Values(1_700_000_000_000, "v"), recordstest.Producer(7, 0, 0), recordstest.Transactional())
		res := rm.AppendRecords(t.Context(), replication.AppendRequest{RequiredAcks: -1, Timeout: time.Second, ProduceVersion: 11,
			Origin: origin, Partitions: []replication.AppendPartition{{TP: tp, Records: b}}})
		if res[0].Err != nil {
			t.Fatalf("open transaction on %s: %v", tp, res[0].Err)
		}
	}
}

func markersRequest(version int16, coordinatorEpoch int32, commit bool, topics map[string][]int32, order ...string) *kmsg.WriteTxnMarkersRequest {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.SetVersion(version)
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch = 7, 0, commit, coordinatorEpoch
	for _, name := range order {
		t := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
		t.Topic, t.Partitions = name, topics[name]
		m.Topics = append(m.Topics, t)
	}
	req.Markers = append(req.Markers, m)
	return req
}

func codes(resp *kmsg.WriteTxnMarkersResponse) map[kafka.TopicPartition]int16 {
	out := map[kafka.TopicPartition]int16{}
	for _, m := range resp.Markers {
		for _, t := range m.Topics {
			for _, p := range t.Partitions {
				out[kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = p.ErrorCode
			}
		}
	}
	return out
}

// TestMarkerWriter: markers are appended to the partitions this broker
// leads, answered per partition with Kafka's codes, and the group
// coordinator learns the result for the __consumer_offsets partitions
// written, only those.
func TestMarkerWriter(t *testing.T) {
	rm, _ := markerRig(t)
	groups := &fakeGroups{}
	w := NewMarkerWriter(rm, groups)
	t0, off0, off1 := kafka.TopicPartition{Topic: "t", Partition: 0}, kafka.TopicPartition{Topic: "__consumer_offsets", Partition: 0}, kafka.TopicPartition{Topic: "__consumer_offsets", Partition: 1}
	openTxn(t, rm, replication.AppendOriginClient, t0)
	openTxn(t, rm, replication.AppendOriginCoordinator, off0, off1)

	topics := map[string][]int32{"t": {0, 5}, "__consumer_offsets": {0, 1}, "gone": {0}}
	resp := w.WriteTxnMarkers(t.Context(), markersRequest(1, 3, true, topics, "t", "__consumer_offsets", "gone"))
	if resp.Version != 1 || len(resp.Markers) != 1 || resp.Markers[0].ProducerID != 7 {
		t.Fatalf("response %+v", resp)
	}
	if got := resp.Markers[0].Topics; len(got) != 3 || got[0].Topic != "t" || got[2].Topic != "gone" || got[0].Partitions[1].Partition != 5 {
		t.Fatalf("topics not in request order: %+v", got)
	}
	want := map[kafka.TopicPartition]int16{t0: 0, {Topic: "t", Partition: 5}: kerr.UnknownTopicOrPartition.Code,
		off0: 0, off1: 0, {Topic: "gone", Partition: 0}: kerr.UnknownTopicOrPartition.Code}
	if got := codes(resp); !maps.Equal(got, want) {
		t.Fatalf("codes %v, want %v", got, want)
	}
	if got, want := groups.calls, []string{txnCall(7, []int32{0, 1}, true)}; !slices.Equal(got, want) {
		t.Fatalf("group coordinator calls %q, want %q", got, want)
	}
	for _, tp := range []kafka.TopicPartition{t0, off0} {
		p, _ := rm.Partition(tp)
		if st := p.State(); st.LastStableOffset != 2 || st.LogEndOffset != 2 {
			t.Fatalf("%s after the commit marker: %+v", tp, st)
		}
	}

	// A coordinator with an older epoch is fenced, and nothing reaches the
	// group coordinator.
	openTxn(t, rm, replication.AppendOriginCoordinator, off0)
	resp = w.WriteTxnMarkers(t.Context(), markersRequest(2, 2, false, map[string][]int32{"__consumer_offsets": {0}}, "__consumer_offsets"))
	if got := codes(resp)[off0]; got != kerr.TransactionCoordinatorFenced.Code {
		t.Fatalf("stale coordinator epoch: code %d", got)
	}
	if len(groups.calls) != 1 {
		t.Fatalf("fenced marker reached the group coordinator: %q", groups.calls)
	}
	resp = w.WriteTxnMarkers(t.Context(), markersRequest(2, 3, false, map[string][]int32{"__consumer_offsets": {0}}, "__consumer_offsets"))
	if got := codes(resp)[off0]; got != 0 || len(groups.calls) != 2 || groups.calls[1] != txnCall(7, []int32{0}, false) {
		t.Fatalf("abort: code %d, calls %q", got, groups.calls)
	}
	// Without a group coordinator the markers are still written.
	openTxn(t, rm, replication.AppendOriginClient, t0)
	resp = NewMarkerWriter(rm, nil).WriteTxnMarkers(t.Context(), markersRequest(1, 3, false, map[string][]int32{"t": {0}}, "t"))
	if got := codes(resp)[t0]; got != 0 {
		t.Fatalf("marker without a group coordinator: %d", got)
	}
}
