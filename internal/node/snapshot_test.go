package node

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/api"
	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/quorum"
	"github.com/sluice-io/sluice/internal/server"
	"github.com/sluice-io/sluice/internal/testutil"
	"github.com/sluice-io/sluice/internal/transport"
	"github.com/sluice-io/sluice/internal/vfs"
)

const snapshotTestCluster = "snapshot-test-cluster"

// snapshotVoter is the part of a voter that snapshots touch: the metadata
// plane (loader, metadata log, checkpoints, single-voter driver with the
// node's snapshot options) and the log server observers fetch from.
type snapshotVoter struct {
	meta *metadataPlane
	logs *quorum.LogServer
}

func (v *snapshotVoter) driver() *quorum.Driver { return v.meta.driver }

func (v *snapshotVoter) image() *metadata.Image { return v.meta.loader.Image() }

// newSnapshotVoter opens the metadata log in dir as openVoter does, with
// snapshots every between bytes, starts its single-voter quorum and waits
// until it leads; the returned stop is also a cleanup.
func newSnapshotVoter(t *testing.T, dir string, between string) (*snapshotVoter, func()) {
	t.Helper()
	cfg, err := config.Parse("", map[string]string{"metadata.log.max.record.bytes.between.snapshots": between})
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.DiscardHandler)
	n := &Node{cfg: cfg, logger: logger, fsys: vfs.Default, clk: clock.Real{}, clusterID: snapshotTestCluster}
	m := &metadataPlane{loader: metadata.NewLoader(logger)}
	if m.store, err = quorum.OpenLogEntryStore(n.fsys, dir, n.clk, logger); err != nil {
		t.Fatal(err)
	}
	m.snaps = quorum.NewFileSnapshotStore(n.fsys, dir, logger)
	m.driver, err = quorum.New(quorum.Options{
		NodeID: 0, Voters: []int32{0}, TickInterval: 10 * time.Millisecond, FS: n.fsys, Dir: dir, Store: m.store,
		Apply: m.apply, Snapshots: n.snapshotOptions(m), Logger: logger, Clock: n.clk,
	})
	if err != nil {
		_ = m.store.Close()
		t.Fatal(err)
	}
	v := &snapshotVoter{meta: m, logs: quorum.NewLogServer(m.driver, m.store, m.snaps, snapshotTestCluster, logger)}
	m.driver.Start()
	stop := sync.OnceFunc(func() {
		if err := m.stopQuorum(); err != nil {
			t.Error(err)
		}
	})
	t.Cleanup(stop)
	testutil.Eventually(t, 5*time.Second, func() bool { return m.driver.Status().IsLeader }, "single voter leads")
	return v, stop
}

// proposeTopics commits the bootstrap records (when first is 0) and count
// topics of one partition each, one entry per topic, and waits until the
// voter has published the status after the last (so any snapshot it took
// is on disk).
func proposeTopics(t *testing.T, v *snapshotVoter, first, count int) {
	t.Helper()
	last, err := commitTopics(v.driver(), first, count)
	if err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 5*time.Second, func() bool { return v.driver().Status().AppliedOffset >= last },
		"voter status shows offset %d applied", last)
}

func commitTopics(d *quorum.Driver, first, count int) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	last := int64(-1)
	if first == 0 {
		off, err := d.Propose(ctx, metadata.EncodeRecords(metadata.BootstrapRecords(snapshotTestCluster, 21)))
		if err != nil {
			return -1, err
		}
		last = off
	}
	for i := first; i < first+count; i++ {
		id := kafka.UUID{0: byte(i >> 8), 1: byte(i), 15: 7}
		recs := []metadata.Record{
			&metadata.TopicRecord{Name: fmt.Sprintf("topic-%04d", i), TopicID: id},
			&metadata.PartitionRecord{TopicID: id, Partition: 0, Replicas: []int32{0}, ISR: []int32{0}, Leader: 0},
		}
		off, err := d.Propose(ctx, metadata.EncodeRecords(recs))
		if err != nil {
			return -1, fmt.Errorf("topic %d: %w", i, err)
		}
		last = off
	}
	return last, nil
}

// compactedVoter is a voter whose log has been compacted behind a snapshot.
func compactedVoter(t *testing.T, dir string, topics int) (*snapshotVoter, func()) {
	t.Helper()
	v, stop := newSnapshotVoter(t, dir, "256")
	proposeTopics(t, v, 0, topics)
	if st := v.driver().Status(); st.LogStartOffset <= 0 || v.meta.store.LogStartOffset() <= 0 {
		t.Fatalf("log not compacted after %d topics with snapshots every 256 bytes: %+v, store start %d", topics, st, v.meta.store.LogStartOffset())
	}
	return v, stop
}

func latestSnapshot(t *testing.T, v *snapshotVoter) quorum.SnapshotID {
	t.Helper()
	id, ok, err := v.meta.snaps.LatestID()
	if err != nil || !ok {
		t.Fatalf("no snapshot: %v", err)
	}
	return id
}

func TestMetadataFetchBelowLogStartAnswersSnapshotID(t *testing.T) {
	v, _ := compactedVoter(t, filepath.Join(t.TempDir(), "__cluster_metadata-0"), 60)
	latest := latestSnapshot(t, v)
	resp, err := v.logs.FetchMetadataLog(t.Context(), metadataFetch(0))
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
	resp, err = v.logs.FetchMetadataLog(t.Context(), metadataFetch(latest.EndOffset))
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
	t.Topic, t.TopicID = quorum.MetadataTopic, kafka.MetadataTopicID()
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
	t.Topic = quorum.MetadataTopic
	p := kmsg.NewFetchSnapshotRequestTopicPartition()
	p.CurrentLeaderEpoch = -1
	p.SnapshotID.EndOffset, p.SnapshotID.Epoch, p.Position = id.EndOffset, id.Epoch, position
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

func TestFetchSnapshotServesTheCheckpointInChunks(t *testing.T) {
	v, _ := compactedVoter(t, filepath.Join(t.TempDir(), "__cluster_metadata-0"), 40)
	id := latestSnapshot(t, v)
	want, err := v.meta.snaps.ReadCheckpoint(id)
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	for len(got) < len(want) {
		resp, err := v.logs.FetchSnapshot(t.Context(), snapshotFetch(id, int64(len(got)), 100))
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
		resp, err := v.logs.FetchSnapshot(t.Context(), req)
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
	staleEpoch.Topics[0].Partitions[0].CurrentLeaderEpoch = int32(v.driver().Status().Epoch) - 1
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
	v, stop := compactedVoter(t, dir, 50)
	before := v.image()
	stop()

	again, _ := newSnapshotVoter(t, dir, "256")
	testutil.Eventually(t, 5*time.Second, func() bool { return again.image().Offset() >= before.Offset() },
		"restarted voter reaches offset %d", before.Offset())
	if got, want := len(again.image().TopicNames()), len(before.TopicNames()); got != want || got != 50 {
		t.Fatalf("restarted voter has %d topics, had %d (want 50)", got, want)
	}
	// Observers are not served the compacted entries: the metadata log
	// starts after the snapshot the restart loaded, and a fetch below it is
	// answered with that snapshot.
	id := latestSnapshot(t, again)
	resp, err := again.logs.FetchMetadataLog(t.Context(), metadataFetch(0))
	if err != nil {
		t.Fatal(err)
	}
	rp := resp.Topics[0].Partitions[0]
	if rp.LogStartOffset <= 0 || rp.LogStartOffset > id.EndOffset {
		t.Fatalf("metadata log starts at %d after a restart from snapshot %+v", rp.LogStartOffset, id)
	}
	if rp.ErrorCode != 0 || rp.SnapshotID.EndOffset != id.EndOffset || rp.SnapshotID.Epoch != id.Epoch || len(rp.RecordBatches) != 0 {
		t.Fatalf("fetch at 0 after a restart: error %d snapshot %+v, %d bytes; want snapshot %+v, no records", rp.ErrorCode, rp.SnapshotID, len(rp.RecordBatches), id)
	}
	proposeTopics(t, again, 50, 1)
	if _, ok := again.image().Topic("topic-0050"); !ok {
		t.Fatal("a topic created after the restart is missing")
	}
}

// serveController serves v's log server (metadata Fetch and FetchSnapshot)
// on a CONTROLLER listener of its own, as the node's controller registry
// does, and returns its address.
func serveController(t *testing.T, v *snapshotVoter) string {
	t.Helper()
	reg, err := api.NewRegistry(api.ControllerListenerRelease(), api.RegistryInfo{ClusterID: snapshotTestCluster},
		api.ControllerHandlers(api.ControllerDeps{MetadataLog: v.logs}))
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

// observerLoader is a fresh loader for an observer; restored receives the
// offset of every snapshot it restores.
func observerLoader(restored chan<- int64) *metadata.Loader {
	return metadata.NewLoader(slog.New(slog.DiscardHandler), func(d *metadata.Delta, im *metadata.Image) {
		if d.Base().Offset() < 0 && im.Offset() > 0 {
			select {
			case restored <- im.Offset():
			default:
			}
		}
	})
}

// startObserver runs an observer of the controller at addr into loader,
// over a pool of its own.
func startObserver(t *testing.T, addr string, chunk int32, loader *metadata.Loader) *quorum.Observer {
	t.Helper()
	peers := transport.NewPool("snapshot-test-observer")
	obs := quorum.NewObserver(quorum.ObserverOptions{
		NodeID:        9,
		Voters:        map[int32]string{0: addr},
		Peers:         peers,
		Apply:         func(c quorum.Committed) error { return loader.Apply(c.Offset, c.Epoch, c.Data) },
		Restore:       loader.Restore,
		FetchTimeout:  time.Second,
		SnapshotChunk: chunk,
		Logger:        slog.New(slog.DiscardHandler),
	})
	obs.Start()
	t.Cleanup(func() {
		obs.Stop()
		peers.Close()
	})
	return obs
}

// awaitObserver waits until the observer's image is the voter's.
func awaitObserver(t *testing.T, obs *quorum.Observer, loader *metadata.Loader, v *snapshotVoter, topics int) {
	t.Helper()
	testutil.EventuallyNoError(t, 15*time.Second, func() error {
		if got, want := loader.Image().Offset(), v.image().Offset(); got < want {
			return fmt.Errorf("observer at %d, voter at %d (observer error %v)", got, want, obs.Err())
		}
		return nil
	}, "observer reaches the voter's offset")
	if got, want := loader.Image().TopicNames(), v.image().TopicNames(); len(got) != topics || len(got) != len(want) {
		t.Fatalf("observer has %d topics, voter %d (want %d)", len(got), len(want), topics)
	}
}

// TestObserverCatchesUpFromSnapshot runs the observer of a dedicated broker
// against a voter whose log was compacted: it must pull the snapshot with
// FetchSnapshot over a real CONTROLLER listener, then the entries after it.
func TestObserverCatchesUpFromSnapshot(t *testing.T) {
	v, _ := compactedVoter(t, filepath.Join(t.TempDir(), "__cluster_metadata-0"), 60)
	restored := make(chan int64, 1024)
	loader := observerLoader(restored)
	obs := startObserver(t, serveController(t, v), 0, loader) // the default chunk
	select {
	case <-obs.CaughtUp():
	case <-time.After(15 * time.Second):
		t.Fatalf("observer did not catch up; image at %d, err %v", loader.Image().Offset(), obs.Err())
	}
	select {
	case off := <-restored:
		if start := v.driver().Status().LogStartOffset; off < start-1 {
			t.Fatalf("restored at %d, below the log start %d", off, start)
		}
	default:
		t.Fatal("the observer caught up without restoring a snapshot")
	}
	// New entries after the snapshot arrive as entries.
	proposeTopics(t, v, 60, 3)
	awaitObserver(t, obs, loader, v, 63)
}

// TestObserverFallenBehindRestoresAgain: an observer that already has an
// image but stopped while the voter compacted past it must restore the
// newer snapshot over its image and continue.
func TestObserverFallenBehindRestoresAgain(t *testing.T) {
	v, _ := compactedVoter(t, filepath.Join(t.TempDir(), "__cluster_metadata-0"), 40)
	addr := serveController(t, v)
	restored := make(chan int64, 1024)
	loader := observerLoader(restored)
	obs := startObserver(t, addr, 64, loader)
	awaitObserver(t, obs, loader, v, 40)
	obs.Stop()
	for len(restored) > 0 {
		<-restored
	}
	behind := loader.Image().Offset()

	proposeTopics(t, v, 40, 60)
	if start := v.driver().Status().LogStartOffset; start <= behind+1 {
		t.Fatalf("log start %d not past the observer's offset %d", start, behind)
	}
	again := startObserver(t, addr, 64, loader)
	awaitObserver(t, again, loader, v, 100)
	select {
	case off := <-restored:
		if off <= behind {
			t.Fatalf("restored at %d, not past the old image %d", off, behind)
		}
	default:
		t.Fatal("the observer caught up from behind the log start without a snapshot")
	}
}
