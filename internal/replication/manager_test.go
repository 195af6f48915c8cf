package replication

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/records/recordstest"
	"github.com/sluice-io/sluice/internal/replication/replicationtest"
	"github.com/sluice-io/sluice/internal/testutil"
	"github.com/sluice-io/sluice/internal/vfs"
)

func TestProduceThenFetch(t *testing.T) {
	f := newFixture(t, nil)
	ts := testStart.UnixMilli()
	res := f.produce(t, -1, AppendPartition{TP: tp("t", 0), Records: batch(t, 3, ts)}, AppendPartition{TP: tp("t", 0), Records: batch(t, 2, ts)})
	for i, r := range res {
		wantCode(t, "produce", r.Err, nil)
		if want := int64(i * 3); r.FirstOffset != want {
			t.Fatalf("append %d base offset %d, want %d", i, r.FirstOffset, want)
		}
	}
	st, _ := f.rm.Partition(tp("t", 0))
	if s := st.State(); s.HighWatermark != 5 || s.LogEndOffset != 5 || s.LastStableOffset != 5 || s.LeaderEpoch != 5 {
		t.Fatalf("state %+v, want HW=LEO=LSO=5 at epoch 5", s)
	}
	out := f.rm.Fetch(t.Context(), FetchParams{ReplicaID: -1, MaxBytes: 1 << 20, MinBytes: 1},
		[]FetchPartition{{TP: tp("t", 0), FetchOffset: 3, CurrentLeaderEpoch: 5, LastFetchedEpoch: -1, MaxBytes: 1 << 20}})
	wantCode(t, "fetch", out[0].Err, nil)
	data, err := out[0].Records.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	var bases []int64
	var epochs []int32
	if _, err := records.Batches(data, func(h records.Header, _ []byte) error {
		bases = append(bases, h.BaseOffset)
		epochs = append(epochs, h.PartitionLeaderEpoch)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(bases) != 1 || bases[0] != 3 || epochs[0] != 5 {
		t.Fatalf("fetched batches at %v epochs %v, want one at 3 with epoch 5", bases, epochs)
	}
}

func TestFetchKIP74FirstBatchWholeAndSharedMaxBytes(t *testing.T) {
	f := newFixture(t, nil)
	ts := testStart.UnixMilli()
	f.produce(t, 1, AppendPartition{TP: tp("t", 0), Records: batch(t, 50, ts)}, AppendPartition{TP: tp("t", 1), Records: batch(t, 50, ts)})
	out := f.rm.Fetch(t.Context(), FetchParams{ReplicaID: -1, MaxBytes: 10, MinBytes: 1}, []FetchPartition{
		{TP: tp("t", 0), LastFetchedEpoch: -1, CurrentLeaderEpoch: -1, MaxBytes: 10},
		{TP: tp("t", 1), LastFetchedEpoch: -1, CurrentLeaderEpoch: -1, MaxBytes: 10},
	})
	if out[0].Records.Size == 0 {
		t.Fatal("first partition: the first batch must come whole above max bytes (KIP-74)")
	}
	if out[1].Records.Size != 0 {
		t.Fatalf("second partition got %d bytes after max bytes was used up", out[1].Records.Size)
	}
}

func TestFetchErrors(t *testing.T) {
	f := newFixture(t, nil)
	f.produce(t, 1, AppendPartition{TP: tp("t", 0), Records: batch(t, 2, testStart.UnixMilli())})
	cases := []struct {
		name string
		fp   FetchPartition
		want *kerr.Error
	}{
		{"beyond log end", FetchPartition{TP: tp("t", 0), FetchOffset: 3, CurrentLeaderEpoch: -1, LastFetchedEpoch: -1}, kerr.OffsetOutOfRange},
		{"fenced epoch", FetchPartition{TP: tp("t", 0), CurrentLeaderEpoch: 4, LastFetchedEpoch: -1}, kerr.FencedLeaderEpoch},
		{"unknown epoch", FetchPartition{TP: tp("t", 0), CurrentLeaderEpoch: 6, LastFetchedEpoch: -1}, kerr.UnknownLeaderEpoch},
		{"unknown partition", FetchPartition{TP: tp("t", 9), CurrentLeaderEpoch: -1, LastFetchedEpoch: -1}, kerr.UnknownTopicOrPartition},
		{"unknown topic", FetchPartition{TP: tp("nope", 0), CurrentLeaderEpoch: -1, LastFetchedEpoch: -1}, kerr.UnknownTopicOrPartition},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.fp.MaxBytes = 1 << 20
			start := time.Now()
			out := f.rm.Fetch(t.Context(), FetchParams{ReplicaID: -1, MaxBytes: 1 << 20, MinBytes: 1 << 20, MaxWait: 10 * time.Second}, []FetchPartition{c.fp})
			wantCode(t, c.name, out[0].Err, c.want)
			if time.Since(start) > 5*time.Second {
				t.Fatal("an error must answer at once, not after max wait")
			}
		})
	}
}

func TestFetchDivergingEpoch(t *testing.T) {
	f := newFixture(t, nil)
	f.produce(t, 1, AppendPartition{TP: tp("t", 0), Records: batch(t, 4, testStart.UnixMilli())})
	// Epoch 5 starts at 0 and is the latest: a fetcher claiming epoch 5 up
	// to offset 4 is consistent; one at offset 6 claims more than exists
	// and is out of range; a claim of epoch 4 diverges: epoch 4 is unknown
	// here, so the answer is (4, start of epoch 5 = 0).
	out := f.rm.Fetch(t.Context(), FetchParams{ReplicaID: -1, MaxBytes: 1 << 20},
		[]FetchPartition{{TP: tp("t", 0), FetchOffset: 4, CurrentLeaderEpoch: 5, LastFetchedEpoch: 5, MaxBytes: 1 << 20}})
	wantCode(t, "consistent", out[0].Err, nil)
	if out[0].DivergingEpoch != nil {
		t.Fatalf("unexpected diverging epoch %+v", out[0].DivergingEpoch)
	}
	out = f.rm.Fetch(t.Context(), FetchParams{ReplicaID: -1, MaxBytes: 1 << 20},
		[]FetchPartition{{TP: tp("t", 0), FetchOffset: 2, CurrentLeaderEpoch: 5, LastFetchedEpoch: 4, MaxBytes: 1 << 20}})
	wantCode(t, "diverging", out[0].Err, nil)
	if d := out[0].DivergingEpoch; d == nil || d.Epoch != 4 || d.EndOffset != 0 {
		t.Fatalf("diverging epoch %+v, want {4 0}", d)
	}
	if out[0].Records.Size != 0 {
		t.Fatal("a diverging fetch must return no records")
	}
}

func TestFetchLongPollWokenByAppend(t *testing.T) {
	f := newFixture(t, nil)
	got := make(chan []FetchPartitionResult)
	go func() {
		got <- f.rm.Fetch(context.Background(), FetchParams{ReplicaID: -1, MaxBytes: 1 << 20, MinBytes: 1, MaxWait: 30 * time.Second},
			[]FetchPartition{{TP: tp("t", 1), CurrentLeaderEpoch: -1, LastFetchedEpoch: -1, MaxBytes: 1 << 20}})
	}()
	testutil.Eventually(t, 5*time.Second, func() bool { return f.rm.fetchWaits.Watching(tp("t", 1)) > 0 }, "fetch parked")
	f.produce(t, 1, AppendPartition{TP: tp("t", 1), Records: batch(t, 1, testStart.UnixMilli())})
	select {
	case out := <-got:
		if out[0].Err != nil || out[0].Records.Size == 0 {
			t.Fatalf("woken fetch: err %v, %d bytes", out[0].Err, out[0].Records.Size)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("append did not wake the long poll")
	}
}

// TestFetchLongPollExpires: a long poll with nothing to read parks until
// its max wait has passed on the manager's clock, then returns empty.
func TestFetchLongPollExpires(t *testing.T) {
	f := newFixture(t, nil)
	got := make(chan []FetchPartitionResult, 1)
	go func() {
		got <- f.rm.Fetch(t.Context(), FetchParams{ReplicaID: -1, MaxBytes: 1 << 20, MinBytes: 1, MaxWait: 50 * time.Millisecond},
			[]FetchPartition{{TP: tp("t", 1), CurrentLeaderEpoch: -1, LastFetchedEpoch: -1, MaxBytes: 1 << 20}})
	}()
	testutil.Eventually(t, 5*time.Second, func() bool { return f.rm.fetchWaits.Waiting() == 1 }, "fetch parked")
	f.clk.Advance(49 * time.Millisecond)
	// Nothing can end the wait before the clock reaches it.
	if f.rm.fetchWaits.Waiting() != 1 || len(got) != 0 {
		t.Fatal("fetch returned before max wait")
	}
	f.clk.Advance(time.Millisecond)
	out := <-got
	if out[0].Err != nil || out[0].Records.Size != 0 {
		t.Fatalf("expired fetch: err %v, %d bytes", out[0].Err, out[0].Records.Size)
	}
}

func TestProduceRefusals(t *testing.T) {
	// The coordinator says the transactional producer did not add t-0.
	v := &fakeVerifier{}
	v.answer(tp("t", 0), kerr.InvalidTxnState.Code)
	f := newFixtureWith(t, nil, func(o *Options) { o.Verifier = v })
	f.setTopicConfig("c", TopicConfig{MinInsyncReplicas: 2, Delete: true, MaxMessageBytes: 1 << 20, TimestampAfterMaxMs: 3600000, TimestampBeforeMaxMs: 1 << 62})
	ts := testStart.UnixMilli()
	corrupt := batch(t, 2, ts)
	corrupt[len(corrupt)-1] ^= 0xff
	txn := recordstest.Batch(t, recordstest.Values(ts, "v"), recordstest.Producer(7, 0, 0), recordstest.Transactional())
	cases := []struct {
		name string
		acks int16
		ap   AppendPartition
		want *kerr.Error
	}{
		{"corrupt", 1, AppendPartition{TP: tp("t", 0), Records: corrupt}, kerr.CorruptMessage},
		{"min isr", -1, AppendPartition{TP: tp("c", 0), Records: batch(t, 1, ts)}, kerr.NotEnoughReplicas},
		{"transactional", 1, AppendPartition{TP: tp("t", 0), Records: txn}, kerr.InvalidTxnState},
		{"unknown topic", 1, AppendPartition{TP: tp("zz", 0), Records: batch(t, 1, ts)}, kerr.UnknownTopicOrPartition},
		{"future timestamp", 1, AppendPartition{TP: tp("t", 0), Records: batch(t, 1, ts+2*3600000)}, kerr.InvalidTimestamp},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := f.produce(t, c.acks, c.ap)
			wantCode(t, c.name, res[0].Err, c.want)
		})
	}
	p, _ := f.rm.Partition(tp("t", 0))
	if leo := p.State().LogEndOffset; leo != 0 {
		t.Fatalf("refused appends wrote: log end offset %d", leo)
	}
	// acks=1 ignores min.insync.replicas, as in Kafka.
	wantCode(t, "acks=1 below min isr", f.produce(t, 1, AppendPartition{TP: tp("c", 0), Records: batch(t, 1, ts)})[0].Err, nil)
}

func TestLogAppendTime(t *testing.T) {
	f := newFixture(t, nil)
	cfg := DefaultTopicConfig()
	cfg.TimestampType = records.LogAppendTime
	f.setTopicConfig("t", cfg)
	res := f.produce(t, 1, AppendPartition{TP: tp("t", 0), Records: batch(t, 1, 5)})
	if res[0].Err != nil || res[0].LogAppendTimeMs != testStart.UnixMilli() {
		t.Fatalf("log append time %d (err %v), want %d", res[0].LogAppendTimeMs, res[0].Err, testStart.UnixMilli())
	}
}

func TestListOffsets(t *testing.T) {
	f := newFixture(t, nil)
	ts := testStart.UnixMilli()
	f.produce(t, 1, AppendPartition{TP: tp("t", 0), Records: batch(t, 3, ts)}, AppendPartition{TP: tp("t", 0), Records: batch(t, 3, ts+100)})
	p, _ := f.rm.Partition(tp("t", 0))
	cases := []struct {
		ts         int64
		wantOffset int64
		wantTS     int64
	}{
		{kafka.ListOffsetsEarliest, 0, -1},
		{ListOffsetsEarliestLocal, 0, -1},
		{kafka.ListOffsetsLatest, 6, -1},
		{kafka.ListOffsetsMaxTimestamp, 5, ts + 102},
		{ts + 1, 1, ts + 1},
		{ts + 50, 3, ts + 100},
		{ts + 1000, -1, -1},
		{ListOffsetsLatestTiered, -1, -1},
	}
	for _, c := range cases {
		got, err := p.ListOffset(c.ts, IsolationHighWatermark, 5, true)
		if err != nil {
			t.Fatalf("ListOffset(%d): %v", c.ts, err)
		}
		if got.Offset != c.wantOffset || got.Timestamp != c.wantTS {
			t.Fatalf("ListOffset(%d) = %+v, want offset %d timestamp %d", c.ts, got, c.wantOffset, c.wantTS)
		}
		if got.Offset >= 0 && got.LeaderEpoch != 5 {
			t.Fatalf("ListOffset(%d) leader epoch %d, want 5", c.ts, got.LeaderEpoch)
		}
	}
	if _, err := p.ListOffset(kafka.ListOffsetsLatest, IsolationHighWatermark, 4, true); ErrorCode(err) != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("stale epoch: %v, want FENCED_LEADER_EPOCH", err)
	}
}

func TestDeleteRecords(t *testing.T) {
	f := newFixture(t, nil)
	f.produce(t, 1, AppendPartition{TP: tp("t", 0), Records: batch(t, 4, testStart.UnixMilli())})
	p, _ := f.rm.Partition(tp("t", 0))
	if _, err := p.DeleteRecordsOnLeader(5, f.topicConfig("t")); ErrorCode(err) != kerr.OffsetOutOfRange.Code {
		t.Fatalf("beyond HW: %v, want OFFSET_OUT_OF_RANGE", err)
	}
	low, err := p.DeleteRecordsOnLeader(2, f.topicConfig("t"))
	if err != nil || low != 2 {
		t.Fatalf("delete to 2: low %d err %v", low, err)
	}
	low, err = p.DeleteRecordsOnLeader(-1, f.topicConfig("t"))
	if err != nil || low != 4 {
		t.Fatalf("delete to HW: low %d err %v, want 4", low, err)
	}
	compactOnly := DefaultTopicConfig()
	compactOnly.Compact, compactOnly.Delete = true, false
	if _, err := p.DeleteRecordsOnLeader(-1, compactOnly); ErrorCode(err) != kerr.PolicyViolation.Code {
		t.Fatalf("compacted topic: %v, want POLICY_VIOLATION", err)
	}
	out := f.rm.Fetch(t.Context(), FetchParams{ReplicaID: -1, MaxBytes: 100},
		[]FetchPartition{{TP: tp("t", 0), FetchOffset: 1, CurrentLeaderEpoch: -1, LastFetchedEpoch: -1, MaxBytes: 100}})
	wantCode(t, "fetch below log start", out[0].Err, kerr.OffsetOutOfRange)
}

func TestOffsetForLeaderEpochAfterNewEpoch(t *testing.T) {
	f := newFixture(t, nil)
	f.produce(t, 1, AppendPartition{TP: tp("t", 0), Records: batch(t, 3, testStart.UnixMilli())})
	// A new leader epoch (7) starts at offset 3.
	_, image, err := replicationtest.Image(1, replicationtest.Topic{Name: "t", ID: replicationtest.TopicID(1), Partitions: 2, LeaderEpoch: 7},
		replicationtest.Topic{Name: "c", ID: replicationtest.TopicID(2), Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	f.rm.ApplyImage(image)
	f.produce(t, 1, AppendPartition{TP: tp("t", 0), Records: batch(t, 2, testStart.UnixMilli())})
	p, _ := f.rm.Partition(tp("t", 0))
	for _, c := range []struct {
		epoch int32
		want  EpochEndOffset
	}{{5, EpochEndOffset{5, 3}}, {6, EpochEndOffset{5, 3}}, {7, EpochEndOffset{7, 5}}, {8, EpochEndOffset{-1, -1}}} {
		got, err := p.EndOffsetForEpoch(-1, c.epoch, true)
		if err != nil || got != c.want {
			t.Fatalf("EndOffsetForEpoch(%d) = %+v, %v; want %+v", c.epoch, got, err, c.want)
		}
	}
	if _, err := p.EndOffsetForEpoch(5, 5, true); ErrorCode(err) != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("old current epoch: %v, want FENCED_LEADER_EPOCH", err)
	}
}

func TestTopicDeletionDropsPartition(t *testing.T) {
	f := newFixture(t, nil)
	_, image, err := replicationtest.Image(1, replicationtest.Topic{Name: "c", ID: replicationtest.TopicID(2), Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	f.rm.ApplyImage(image)
	if _, err := f.rm.Partition(tp("t", 0)); ErrorCode(err) != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("deleted topic: %v, want UNKNOWN_TOPIC_OR_PARTITION", err)
	}
	if _, err := f.rm.Partition(tp("c", 0)); err != nil {
		t.Fatalf("kept topic: %v", err)
	}
}

// TestFailedLogDirIsolated breaks the disk under one partition: its produce
// fails with KAFKA_STORAGE_ERROR while another partition goes on.
func TestFailedLogDirIsolated(t *testing.T) {
	efs := vfs.NewErrorFS(vfs.NewMem(), nil)
	f := newFixture(t, efs)
	t.Cleanup(func() { efs.SetInjector(nil) }) // runs before the fixture's cleanup
	ts := testStart.UnixMilli()
	efs.SetInjector(vfs.FailPaths(func(path string) bool { return strings.Contains(path, "/t-0") }, syscall.EIO))
	res := f.produce(t, 1, AppendPartition{TP: tp("t", 0), Records: batch(t, 1, ts)}, AppendPartition{TP: tp("t", 1), Records: batch(t, 1, ts)})
	wantCode(t, "broken partition", res[0].Err, kerr.KafkaStorageError)
	wantCode(t, "healthy partition", res[1].Err, nil)
	out := f.rm.Fetch(t.Context(), FetchParams{ReplicaID: -1, MaxBytes: 1 << 20}, []FetchPartition{
		{TP: tp("t", 1), CurrentLeaderEpoch: -1, LastFetchedEpoch: -1, MaxBytes: 1 << 20}})
	if out[0].Err != nil || out[0].Records.Size == 0 {
		t.Fatalf("healthy partition fetch: err %v, %d bytes", out[0].Err, out[0].Records.Size)
	}
}

func TestFollowerRefusesClients(t *testing.T) {
	f := newFixture(t, nil)
	d := metadata.NewDelta(f.rm.Image())
	if err := d.Replay(100, 2, &metadata.PartitionChangeRecord{TopicID: replicationtest.TopicID(1), Partition: 0,
		Leader: 2, Replicas: []int32{1, 2}, ISR: []int32{1, 2}}); err != nil {
		t.Fatal(err)
	}
	f.rm.ApplyDelta(d, d.Apply())
	p, err := f.rm.Partition(tp("t", 0))
	if err != nil {
		t.Fatal(err)
	}
	if st := p.State(); st.Role != RoleFollower || st.LeaderID != 2 || st.LeaderEpoch != 6 {
		t.Fatalf("state %+v, want follower of 2 at epoch 6", st)
	}
	corrupt := batch(t, 1, testStart.UnixMilli())
	corrupt[len(corrupt)-1] ^= 1
	// Leadership is refused before the batch is looked at, as in Kafka.
	wantCode(t, "produce to follower", f.produce(t, 1, AppendPartition{TP: tp("t", 0), Records: corrupt})[0].Err, kerr.NotLeaderForPartition)
	out := f.rm.Fetch(t.Context(), FetchParams{ReplicaID: -1, MaxBytes: 100},
		[]FetchPartition{{TP: tp("t", 0), CurrentLeaderEpoch: 6, LastFetchedEpoch: -1, MaxBytes: 100}})
	wantCode(t, "consumer fetch from follower", out[0].Err, kerr.NotLeaderForPartition)
}

func TestMinInsyncCheckedBeforeValidation(t *testing.T) {
	f := newFixture(t, nil)
	cfg := DefaultTopicConfig()
	cfg.MinInsyncReplicas = 2
	f.setTopicConfig("c", cfg)
	corrupt := batch(t, 1, testStart.UnixMilli())
	corrupt[len(corrupt)-1] ^= 1
	wantCode(t, "acks=all corrupt below min isr", f.produce(t, -1, AppendPartition{TP: tp("c", 0), Records: corrupt})[0].Err, kerr.NotEnoughReplicas)
}

// TestHighWatermarkFollowsISR gives partition t-0 a second in-sync replica:
// the high watermark waits for it, acks=all times out while it lags, and its
// fetches move the watermark.
func TestHighWatermarkFollowsISR(t *testing.T) {
	f := newFixture(t, nil)
	d := metadata.NewDelta(f.rm.Image())
	if err := d.Replay(100, 2, &metadata.PartitionChangeRecord{TopicID: replicationtest.TopicID(1), Partition: 0,
		Leader: 1, Replicas: []int32{1, 2}, ISR: []int32{1, 2}}); err != nil {
		t.Fatal(err)
	}
	f.rm.ApplyDelta(d, d.Apply())
	ts := testStart.UnixMilli()
	timedOut := make(chan []PartitionAppendResult, 1)
	go func() {
		timedOut <- f.rm.AppendRecords(t.Context(), AppendRequest{RequiredAcks: -1, Timeout: 30 * time.Millisecond, ProduceVersion: 11,
			Partitions: []AppendPartition{{TP: tp("t", 0), Records: batch(t, 2, ts)}}})
	}()
	testutil.Eventually(t, 5*time.Second, func() bool { return f.rm.produceWaits.Waiting() == 1 }, "acks=all produce parked")
	f.clk.Advance(30 * time.Millisecond)
	res := <-timedOut
	wantCode(t, "acks=all with a lagging follower", res[0].Err, kerr.RequestTimedOut)
	p, _ := f.rm.Partition(tp("t", 0))
	if hw := p.HighWatermark(); hw != 0 {
		t.Fatalf("high watermark %d before the follower fetched, want 0", hw)
	}
	// A consumer sees nothing above the high watermark.
	out := f.rm.Fetch(t.Context(), FetchParams{ReplicaID: -1, MaxBytes: 1 << 20},
		[]FetchPartition{{TP: tp("t", 0), CurrentLeaderEpoch: -1, LastFetchedEpoch: -1, MaxBytes: 1 << 20}})
	if out[0].Err != nil || out[0].Records.Size != 0 {
		t.Fatalf("consumer fetch above HW: err %v, %d bytes", out[0].Err, out[0].Records.Size)
	}

	done := make(chan []PartitionAppendResult)
	go func() {
		done <- f.rm.AppendRecords(context.Background(), AppendRequest{RequiredAcks: -1, Timeout: 30 * time.Second, ProduceVersion: 11,
			Partitions: []AppendPartition{{TP: tp("t", 0), Records: batch(t, 1, ts)}}})
	}()
	testutil.Eventually(t, 5*time.Second, func() bool { return p.State().LogEndOffset == 3 }, "second append")
	// The follower fetches at 3: it has everything, the watermark moves to 3
	// and the parked produce completes.
	out = f.rm.Fetch(t.Context(), FetchParams{ReplicaID: 2, MaxBytes: 1 << 20},
		[]FetchPartition{{TP: tp("t", 0), FetchOffset: 3, CurrentLeaderEpoch: -1, LastFetchedEpoch: -1, MaxBytes: 1 << 20}})
	wantCode(t, "follower fetch", out[0].Err, nil)
	select {
	case res := <-done:
		wantCode(t, "acks=all after follower caught up", res[0].Err, nil)
	case <-time.After(10 * time.Second):
		t.Fatal("follower progress did not complete the acks=all produce")
	}
	if hw := p.HighWatermark(); hw != 3 {
		t.Fatalf("high watermark %d, want 3", hw)
	}
	if got := f.rm.HighWatermarks()[tp("t", 0)]; got != 3 {
		t.Fatalf("HighWatermarks()[t-0] = %d, want 3", got)
	}
}

type checkpointedLogs struct {
	*replicationtest.MemLogs
	hw int64
}

func (c checkpointedLogs) CheckpointedHighWatermark(kafka.TopicPartition) (int64, bool) {
	return c.hw, true
}

func TestHighWatermarkRestoredFromCheckpoint(t *testing.T) {
	f := newFixture(t, nil)
	f.produce(t, 1, AppendPartition{TP: tp("t", 0), Records: batch(t, 5, testStart.UnixMilli())})
	d := metadata.NewDelta(f.rm.Image())
	if err := d.Replay(100, 2, &metadata.PartitionChangeRecord{TopicID: replicationtest.TopicID(1), Partition: 0,
		Leader: 1, Replicas: []int32{1, 2}, ISR: []int32{1, 2}}); err != nil {
		t.Fatal(err)
	}
	image := d.Apply()
	for _, c := range []struct{ checkpoint, want int64 }{{3, 3}, {9, 5}, {-4, 0}} {
		rm, err := NewReplicaManager(Options{BrokerID: 1, FS: f.logs.FS, Logs: checkpointedLogs{f.logs, c.checkpoint}, Clock: f.clk})
		if err != nil {
			t.Fatal(err)
		}
		rm.ApplyImage(image)
		p, err := rm.Partition(tp("t", 0))
		if err != nil {
			t.Fatal(err)
		}
		if hw := p.HighWatermark(); hw != c.want {
			t.Errorf("checkpoint %d: high watermark %d, want %d", c.checkpoint, hw, c.want)
		}
		rm.Close()
	}
}

// TestPartitionThatCannotOpenAnswersStorageError: a log that fails to open
// leaves its partition answering KAFKA_STORAGE_ERROR; the others are served.
func TestPartitionThatCannotOpenAnswersStorageError(t *testing.T) {
	efs := vfs.NewErrorFS(vfs.NewMem(), vfs.FailPaths(func(path string) bool { return strings.Contains(path, "/t-1") }, syscall.EIO))
	f := newFixture(t, efs)
	if _, err := f.rm.Partition(tp("t", 1)); ErrorCode(err) != kerr.KafkaStorageError.Code {
		t.Fatalf("unopenable partition: %v, want KAFKA_STORAGE_ERROR", err)
	}
	res := f.produce(t, 1, AppendPartition{TP: tp("t", 1), Records: batch(t, 1, testStart.UnixMilli())},
		AppendPartition{TP: tp("t", 0), Records: batch(t, 1, testStart.UnixMilli())})
	wantCode(t, "unopenable partition", res[0].Err, kerr.KafkaStorageError)
	wantCode(t, "healthy partition", res[1].Err, nil)
}
