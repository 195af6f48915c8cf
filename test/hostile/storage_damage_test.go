package hostile

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/commitlog/checkpoint"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/vfs"
)

// segmentedTopic is a topic whose 1 MiB segments (the smallest
// segment.bytes Kafka allows) fill with 64 KiB batches: 48 batches make
// three sealed segments and an active one.
const (
	batchRecords = 64
	recordSize   = 1000
	batchCount   = 48
)

// TestDamagedBatchServedUpToTheDamage writes a partition of several
// segments, stops the server cleanly, damages the magic byte of a batch in
// the middle of its first (sealed) segment and restarts it. A franz-go
// consumer from offset 0 reads every record before the damaged batch,
// intact; a Fetch at the damaged batch answers CORRUPT_MESSAGE (Kafka's
// answer for a batch its FileRecords iteration cannot read), one at the
// next segment is served; the server logs the damage once with the file,
// position and offset, and sluice_log_corrupt_batches_total counts it.
func TestDamagedBatchServedUpToTheDamage(t *testing.T) {
	n := startDiskNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := n.client()
	createTopicWith(t, ctx, cl, "damaged", "segment.bytes", "1048576")
	produceNumbered(t, ctx, cl, "damaged", batchCount, batchRecords, recordSize)
	n.stop()

	dir := n.partitionDir("damaged")
	bases := segmentBases(t, dir)
	if len(bases) < 3 {
		t.Fatalf("%d segments, the test needs 3", len(bases))
	}
	first := segmentFilePath(dir, bases[0], ".log")
	batches := segmentBatchList(t, first)
	bad := batches[len(batches)/2]
	f, err := os.OpenFile(first, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0x7f}, bad.pos+16); err != nil { // the magic byte
		t.Fatal(err)
	}
	f.Close()

	n.start()
	consumer := n.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"damaged": {0: kgo.NewOffset().At(0)}}))
	next := int64(0)
	for next < bad.base {
		fetches := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d records of the %d before the damage", next, bad.base)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			if r.Offset != next || !strings.HasPrefix(string(r.Value), fmt.Sprintf("record-%d;", next)) {
				t.Fatalf("record at %d: offset %d value %.20q", next, r.Offset, r.Value)
			}
			next++
		})
	}
	if next != bad.base {
		t.Fatalf("consumed up to %d, past the damaged batch at %d", next, bad.base)
	}

	id := lookupTopicID(t, ctx, cl, "damaged")
	cl = n.client()
	if code, _ := fetchPartition0(t, ctx, cl, "damaged", id, bad.base); code != kerr.CorruptMessage.Code {
		t.Errorf("fetch at the damaged batch: %s, want CORRUPT_MESSAGE", kerr.ErrorForCode(code))
	}
	if code, data := fetchPartition0(t, ctx, cl, "damaged", id, bases[1]); code != 0 || len(data) == 0 {
		t.Errorf("fetch at the next segment: %s, %d bytes", kerr.ErrorForCode(code), len(data))
	}
	fetchPartition0(t, ctx, cl, "damaged", id, bad.base) // again: logged and counted once
	logLine := fmt.Sprintf("file=%s position=%d offset=%d", first, bad.pos, bad.base)
	if got := strings.Count(n.srv.Logs(), "corrupt record batch on disk"); got != 1 || !strings.Contains(n.srv.Logs(), logLine) {
		t.Errorf("the damage was logged %d times, want once with %q", got, logLine)
	}
	if m := n.metrics(); !strings.Contains(m, `sluice_log_corrupt_batches_total{partition="0",topic="damaged"} 1`) {
		t.Errorf("/metrics does not count the damage once:\n%s", linesWith(m, "corrupt"))
	}
}

// TestLogStartCheckpointFarAheadLeavesDataReadable stops the server
// cleanly, sets the partition's log-start-offset-checkpoint entry a million
// offsets beyond its end and restarts: the checkpoint is logged and
// ignored, the log still starts at 0 and every record reads back (Kafka
// would have deleted them all).
func TestLogStartCheckpointFarAheadLeavesDataReadable(t *testing.T) {
	n := startDiskNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := n.client()
	createTopicWith(t, ctx, cl, "ahead")
	produceNumbered(t, ctx, cl, "ahead", 5, 2, 100)
	n.stop()

	path := filepath.Join(n.cfg.DataDir, checkpoint.LogStartOffsetFile)
	starts, err := checkpoint.Read(vfs.Default, path)
	if err != nil {
		t.Fatal(err)
	}
	starts[kafka.TopicPartition{Topic: "ahead", Partition: 0}] = 1_000_000
	if err := checkpoint.Write(vfs.Default, path, starts); err != nil {
		t.Fatal(err)
	}

	n.start()
	cl = n.client()
	if start := partitionStartOffset(t, ctx, cl, "ahead"); start != 0 {
		t.Fatalf("log start offset %d after the bad checkpoint, want 0", start)
	}
	code, data := fetchPartition0(t, ctx, cl, "ahead", lookupTopicID(t, ctx, cl, "ahead"), 0)
	if code != 0 || recordsIn(t, data) != 10 {
		t.Fatalf("fetch from 0: %s, %d records, want the 10 written", kerr.ErrorForCode(code), recordsIn(t, data))
	}
	if !strings.Contains(n.srv.Logs(), "log-start-offset-checkpoint is beyond the log end offset") {
		t.Error("the ignored checkpoint was not logged")
	}
}

// TestDeletedMiddleSegmentFailsOnlyItsPartition stops the server cleanly,
// deletes a middle segment of one partition and restarts: that partition
// answers KAFKA_STORAGE_ERROR to Fetch and to Produce (whose error message
// names the missing offsets) instead of serving around a silent hole, the
// server logs why, and another topic of the same log dir reads and writes
// as before.
func TestDeletedMiddleSegmentFailsOnlyItsPartition(t *testing.T) {
	n := startDiskNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := n.client()
	createTopicWith(t, ctx, cl, "holed", "segment.bytes", "1048576")
	createTopicWith(t, ctx, cl, "intact")
	produceNumbered(t, ctx, cl, "holed", batchCount, batchRecords, recordSize)
	produceNumbered(t, ctx, cl, "intact", 3, 2, 100)
	n.stop()

	dir := n.partitionDir("holed")
	bases := segmentBases(t, dir)
	if len(bases) < 3 {
		t.Fatalf("%d segments, the test needs 3", len(bases))
	}
	for _, suffix := range []string{".log", ".index", ".timeindex"} {
		if err := os.Remove(segmentFilePath(dir, bases[1], suffix)); err != nil {
			t.Fatal(err)
		}
	}

	n.start()
	cl = n.client()
	holed := lookupTopicID(t, ctx, cl, "holed")
	if code, _ := fetchPartition0(t, ctx, cl, "holed", holed, 0); code != kerr.KafkaStorageError.Code {
		t.Errorf("fetch of the holed partition: %s, want KAFKA_STORAGE_ERROR", kerr.ErrorForCode(code))
	}
	code, msg := producePartition0(t, ctx, cl, "holed", holed)
	want := fmt.Sprintf("holds offsets %d to %d", bases[1], bases[2]-1)
	if code != kerr.KafkaStorageError.Code || !strings.Contains(msg, want) {
		t.Errorf("produce to the holed partition: %s %q, want KAFKA_STORAGE_ERROR saying it %s", kerr.ErrorForCode(code), msg, want)
	}
	if !strings.Contains(n.srv.Logs(), "partition log stopped") || !strings.Contains(n.srv.Logs(), want) {
		t.Error("the server did not log the missing segment")
	}
	intact := lookupTopicID(t, ctx, cl, "intact")
	if code, msg := producePartition0(t, ctx, cl, "intact", intact); code != 0 {
		t.Fatalf("produce to another topic: %s %s", kerr.ErrorForCode(code), msg)
	}
	code, data := fetchPartition0(t, ctx, cl, "intact", intact, 0)
	if code != 0 || recordsIn(t, data) != 7 {
		t.Fatalf("fetch of another topic: %s, %d records, want 7", kerr.ErrorForCode(code), recordsIn(t, data))
	}
}

// producePartition0 sends one record to partition 0 of topic with acks=1 and
// returns the partition's error code and message.
func producePartition0(t *testing.T, ctx context.Context, cl *kgo.Client, topic string, id [16]byte) (int16, string) {
	t.Helper()
	batch := oneRecordBatch(t, []byte("one more"))
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = 1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = topic, id
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = 0, batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("produce to %s: %v", topic, err)
	}
	p := resp.Topics[0].Partitions[0]
	msg := ""
	if p.ErrorMessage != nil {
		msg = *p.ErrorMessage
	}
	return p.ErrorCode, msg
}

// linesWith returns the lines of s that contain substr.
func linesWith(s, substr string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
