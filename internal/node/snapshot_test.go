package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/internal/api"
	"sluice/internal/clock"
	"sluice/internal/config"
	"sluice/internal/controller"
	"sluice/internal/kafka"
	"sluice/internal/metadata"
	"sluice/internal/quorum"
	"sluice/internal/server"
	"sluice/internal/vfs"
)

const snapshotTestCluster = "snapshot-test-cluster"

// newSnapshotVoter builds the parts of a voter that snapshots touch (loader,
// observer tail, single-voter quorum with snapshots on) over the metadata
// log in dir, as openQuorum does, and starts its quorum.
func newSnapshotVoter(t *testing.T, dir string, between string) (*Node, func()) {
	t.Helper()
	cfg, err := config.Parse("", map[string]string{"metadata.log.max.record.bytes.between.snapshots": between})
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.DiscardHandler)
	n := &Node{cfg: cfg, logger: logger, fsys: vfs.Default, clk: clock.Real{}, clusterID: snapshotTestCluster}
	n.loader = metadata.NewLoader(logger)
	n.tail = newCommittedTail(metadataTailBytes)
	if n.store, err = quorum.OpenLogEntryStore(n.fsys, dir, n.clk, logger); err != nil {
		t.Fatal(err)
	}
	n.driver, err = quorum.New(quorum.Options{
		NodeID: 0, Voters: []int32{0}, TickInterval: 10 * time.Millisecond, FS: n.fsys, Dir: dir, Store: n.store,
		Apply: func(c quorum.Committed) error {
			if err := n.loader.Apply(c.Offset, c.Epoch, c.Data); err != nil {
				return err
			}
			return n.tail.add(c.Offset, c.Epoch, c.Data)
		},
		Snapshots: n.snapshotOptions(dir),
		Logger:    logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	n.driver.Start()
	stop := sync.OnceFunc(func() { stopSnapshotVoter(t, n) })
	t.Cleanup(stop)
	deadline := time.Now().Add(5 * time.Second)
	for !n.driver.Status().IsLeader {
		if time.Now().After(deadline) {
			t.Fatal("single voter did not lead")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return n, stop
}

func stopSnapshotVoter(t *testing.T, n *Node) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := n.driver.Stop(ctx); err != nil {
		t.Error(err)
	}
	if err := n.store.Close(); err != nil {
		t.Error(err)
	}
}

// proposeTopics commits the bootstrap records (when first) and count
// topics of one partition each, one entry per topic.
func proposeTopics(t *testing.T, n *Node, first, count int) {
	t.Helper()
	if err := commitTopics(n, first, count); err != nil {
		t.Fatal(err)
	}
}

func commitTopics(n *Node, first, count int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if first == 0 {
		if _, err := n.driver.Propose(ctx, metadata.EncodeRecords(metadata.BootstrapRecords(snapshotTestCluster, 21))); err != nil {
			return err
		}
	}
	for i := first; i < first+count; i++ {
		id := kafka.UUID{0: byte(i >> 8), 1: byte(i), 15: 7}
		recs := []metadata.Record{
			&metadata.TopicRecord{Name: fmt.Sprintf("topic-%04d", i), TopicID: id},
			&metadata.PartitionRecord{TopicID: id, Partition: 0, Replicas: []int32{0}, ISR: []int32{0}, Leader: 0},
		}
		if _, err := n.driver.Propose(ctx, metadata.EncodeRecords(recs)); err != nil {
			return fmt.Errorf("topic %d: %w", i, err)
		}
	}
	return nil
}

// compactedVoter is a voter whose log has been compacted behind a snapshot.
func compactedVoter(t *testing.T, dir string, topics int) (*Node, func()) {
	t.Helper()
	n, stop := newSnapshotVoter(t, dir, "256")
	proposeTopics(t, n, 0, topics)
	if st := n.driver.Status(); st.LogStartOffset <= 0 {
		t.Fatalf("log not compacted after %d topics with snapshots every 256 bytes: %+v", topics, st)
	}
	return n, stop
}

func TestMetadataFetchBelowLogStartAnswersSnapshotID(t *testing.T) {
	n, _ := compactedVoter(t, filepath.Join(t.TempDir(), "__cluster_metadata-0"), 60)
	latest, ok, err := n.snapshots.store.LatestID()
	if err != nil || !ok {
		t.Fatalf("no snapshot: %v", err)
	}
	resp, err := n.FetchMetadataLog(t.Context(), metadataFetch(0))
	if err != nil {
		t.Fatal(err)
	}
	rp := resp.Topics[0].Partitions[0]
	if rp.ErrorCode != 0 || rp.SnapshotID.EndOffset != latest.EndOffset || rp.SnapshotID.Epoch != latest.Epoch || len(rp.RecordBatches) != 0 {
		t.Fatalf("fetch at 0: error %d snapshot %+v, %d bytes; want no error, snapshot %+v, no records", rp.ErrorCode, rp.SnapshotID, len(rp.RecordBatches), latest)
	}
	if rp.LogStartOffset <= 0 || rp.LogStartOffset > latest.EndOffset {
		t.Fatalf("log start %d, want in (0, %d]", rp.LogStartOffset, latest.EndOffset)
	}
	// From the snapshot's end on the log is served.
	resp, err = n.FetchMetadataLog(t.Context(), metadataFetch(latest.EndOffset))
	if err != nil {
		t.Fatal(err)
	}
	if rp := resp.Topics[0].Partitions[0]; rp.ErrorCode != 0 || rp.SnapshotID.EndOffset != -1 {
		t.Fatalf("fetch at the snapshot end: error %d snapshot %+v", rp.ErrorCode, rp.SnapshotID)
	}
}

func metadataFetch(offset int64) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = 16
	req.MaxWaitMillis = 1
	t := kmsg.NewFetchRequestTopic()
	t.Topic, t.TopicID = controller.MetadataTopic, metadataTopicID
	p := kmsg.NewFetchRequestTopicPartition()
	p.FetchOffset, p.PartitionMaxBytes = offset, 1<<20
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

func snapshotFetch(id quorum.SnapshotID, position int64, maxBytes int32) *kmsg.FetchSnapshotRequest {
	req := kmsg.NewPtrFetchSnapshotRequest()
	req.MaxBytes = maxBytes
	t := kmsg.NewFetchSnapshotRequestTopic()
	t.Topic = controller.MetadataTopic
	p := kmsg.NewFetchSnapshotRequestTopicPartition()
	p.CurrentLeaderEpoch = -1
	p.SnapshotID.EndOffset, p.SnapshotID.Epoch, p.Position = id.EndOffset, id.Epoch, position
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

func TestFetchSnapshotServesTheCheckpointInChunks(t *testing.T) {
	n, _ := compactedVoter(t, filepath.Join(t.TempDir(), "__cluster_metadata-0"), 40)
	id, _, err := n.snapshots.store.LatestID()
	if err != nil {
		t.Fatal(err)
	}
	want, err := n.snapshots.store.ReadCheckpoint(id)
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	for len(got) < len(want) {
		resp, err := n.FetchSnapshot(t.Context(), snapshotFetch(id, int64(len(got)), 100))
		if err != nil {
			t.Fatal(err)
		}
		rp := resp.Topics[0].Partitions[0]
		if rp.ErrorCode != 0 || rp.Size != int64(len(want)) || rp.Position != int64(len(got)) || len(rp.Bytes) == 0 || len(rp.Bytes) > 100 {
			t.Fatalf("chunk at %d: error %d size %d position %d, %d bytes", len(got), rp.ErrorCode, rp.Size, rp.Position, len(rp.Bytes))
		}
		got = append(got, rp.Bytes...)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("chunks do not join into the checkpoint")
	}
	partitionError := func(req *kmsg.FetchSnapshotRequest) int16 {
		t.Helper()
		resp, err := n.FetchSnapshot(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ErrorCode != 0 {
			return resp.ErrorCode
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	other := "another-cluster"
	wrongCluster := snapshotFetch(id, 0, 100)
	wrongCluster.ClusterID = &other
	staleEpoch := snapshotFetch(id, 0, 100)
	staleEpoch.Topics[0].Partitions[0].CurrentLeaderEpoch = int32(n.driver.Status().Epoch) - 1
	for name, c := range map[string]struct {
		req  *kmsg.FetchSnapshotRequest
		code int16
	}{
		"wrong cluster":    {wrongCluster, kerr.InconsistentClusterID.Code},
		"unknown snapshot": {snapshotFetch(quorum.SnapshotID{EndOffset: id.EndOffset - 1, Epoch: id.Epoch}, 0, 100), kerr.SnapshotNotFound.Code},
		"past the end":     {snapshotFetch(id, int64(len(want)), 100), kerr.PositionOutOfRange.Code},
		"negative":         {snapshotFetch(id, -1, 100), kerr.PositionOutOfRange.Code},
		"stale epoch":      {staleEpoch, kerr.FencedLeaderEpoch.Code},
	} {
		if code := partitionError(c.req); code != c.code {
			t.Errorf("%s: error %d, want %d", name, code, c.code)
		}
	}
}

func TestRestartedVoterLoadsSnapshotAndKeepsEveryTopic(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "__cluster_metadata-0")
	n, stop := compactedVoter(t, dir, 50)
	before := n.Image()
	stop()

	again, _ := newSnapshotVoter(t, dir, "256")
	deadline := time.Now().Add(5 * time.Second)
	for again.Image().Offset() < before.Offset() {
		if time.Now().After(deadline) {
			t.Fatalf("restarted voter at offset %d, want %d", again.Image().Offset(), before.Offset())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got, want := len(again.Image().TopicNames()), len(before.TopicNames()); got != want || got != 50 {
		t.Fatalf("restarted voter has %d topics, had %d (want 50)", got, want)
	}
	// Observers are not served the compacted entries: the tail starts
	// after the snapshot the restart loaded.
	id, _, err := again.snapshots.store.LatestID()
	if err != nil {
		t.Fatal(err)
	}
	if start := again.tail.startOffset(); start <= 0 || start > id.EndOffset {
		t.Fatalf("observer tail starts at %d after a restart from snapshot %+v", start, id)
	}
	proposeTopics(t, again, 50, 1)
	if _, ok := again.Image().Topic("topic-0050"); !ok {
		t.Fatal("a topic created after the restart is missing")
	}
}

// serveController serves n's controller API set (metadata Fetch and
// FetchSnapshot) on a CONTROLLER listener of its own and returns its address.
func serveController(t *testing.T, n *Node) string {
	t.Helper()
	rel := api.WithFetchSnapshot(api.ControllerRelease())
	reg, err := api.NewRegistry(api.Deps{Release: &rel, ClusterID: snapshotTestCluster},
		append(api.ControllerHandlers(nil, n), api.FetchSnapshotHandler(n))...)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Listeners: []server.Listener{{Name: "CONTROLLER", Address: "127.0.0.1:0"}}, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	return srv.Addr("CONTROLLER").String()
}

// startObserver runs an observer of the controller at addr into a fresh
// loader; restored receives the offset of every snapshot it restores.
func startObserver(t *testing.T, addr string, chunk int32) (*metadataObserver, *metadata.Loader, <-chan int64) {
	t.Helper()
	restored := make(chan int64, 1024)
	loader := metadata.NewLoader(slog.New(slog.DiscardHandler), func(d *metadata.Delta, im *metadata.Image) {
		if d.Base().Offset() < 0 && im.Offset() > 0 {
			select {
			case restored <- im.Offset():
			default:
			}
		}
	})
	obs := newMetadataObserver(9, map[int32]string{0: addr}, loader, time.Second, slog.New(slog.DiscardHandler))
	obs.snapshotChunk = chunk
	obs.start()
	t.Cleanup(obs.stop)
	return obs, loader, restored
}

// awaitObserver waits until the observer's image is the voter's.
func awaitObserver(t *testing.T, obs *metadataObserver, loader *metadata.Loader, n *Node, topics int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for loader.Image().Offset() < n.Image().Offset() {
		if time.Now().After(deadline) {
			t.Fatalf("observer at %d, voter at %d (observer error %v)", loader.Image().Offset(), n.Image().Offset(), obs.Err())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got, want := loader.Image().TopicNames(), n.Image().TopicNames(); len(got) != topics || len(got) != len(want) {
		t.Fatalf("observer has %d topics, voter %d (want %d)", len(got), len(want), topics)
	}
}

// TestObserverCatchesUpFromSnapshot runs the observer of a dedicated broker
// against a voter whose log was compacted: it must pull the snapshot with
// FetchSnapshot over a real CONTROLLER listener, then the entries after it.
func TestObserverCatchesUpFromSnapshot(t *testing.T) {
	n, _ := compactedVoter(t, filepath.Join(t.TempDir(), "__cluster_metadata-0"), 60)
	obs, loader, restored := startObserver(t, serveController(t, n), snapshotChunkBytes)
	select {
	case <-obs.CaughtUp():
	case <-time.After(15 * time.Second):
		t.Fatalf("observer did not catch up; image at %d, err %v", loader.Image().Offset(), obs.Err())
	}
	select {
	case off := <-restored:
		if off < n.driver.Status().LogStartOffset-1 {
			t.Fatalf("restored at %d, below the log start %d", off, n.driver.Status().LogStartOffset)
		}
	default:
		t.Fatal("the observer caught up without restoring a snapshot")
	}
	// New entries after the snapshot arrive as entries.
	proposeTopics(t, n, 60, 3)
	awaitObserver(t, obs, loader, n, 63)
}

// TestObserverFallenBehindRestoresAgain: an observer that already has an
// image but stopped while the voter compacted past it must restore the
// newer snapshot over its image and continue; a snapshot id the voter no
// longer has is errSnapshotChanged, so the observer fetches again.
func TestObserverFallenBehindRestoresAgain(t *testing.T) {
	n, _ := compactedVoter(t, filepath.Join(t.TempDir(), "__cluster_metadata-0"), 40)
	addr := serveController(t, n)
	obs, loader, restored := startObserver(t, addr, 64)
	awaitObserver(t, obs, loader, n, 40)
	obs.stop()
	for len(restored) > 0 {
		<-restored
	}
	behind := loader.Image().Offset()

	proposeTopics(t, n, 40, 60)
	if st := n.driver.Status(); st.LogStartOffset <= behind+1 {
		t.Fatalf("log start %d not past the observer's offset %d", st.LogStartOffset, behind)
	}
	again := newMetadataObserver(9, map[int32]string{0: addr}, loader, time.Second, slog.New(slog.DiscardHandler))
	again.snapshotChunk = 64
	again.start()
	t.Cleanup(again.stop)
	awaitObserver(t, again, loader, n, 100)
	select {
	case off := <-restored:
		if off <= behind {
			t.Fatalf("restored at %d, not past the old image %d", off, behind)
		}
	default:
		t.Fatal("the observer caught up from behind the log start without a snapshot")
	}

	latest, _, err := n.snapshots.store.LatestID()
	if err != nil {
		t.Fatal(err)
	}
	cl, err := again.client(addr)
	if err != nil {
		t.Fatal(err)
	}
	stale := quorum.SnapshotID{EndOffset: latest.EndOffset - 1, Epoch: latest.Epoch}
	if err := again.loadSnapshot(t.Context(), cl, 0, stale); !errors.Is(err, errSnapshotChanged) {
		t.Fatalf("pulling a replaced snapshot: %v, want errSnapshotChanged", err)
	}
}
