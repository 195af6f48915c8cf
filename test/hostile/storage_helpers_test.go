package hostile

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/records/recordstest"
	"github.com/sluice-io/sluice/internal/testbin"
)

// diskNode is a single-node server whose data dir and ports survive restarts,
// so a test can stop it, damage its files and start it again.
type diskNode struct {
	t     *testing.T
	cfg   testbin.ServerConfig
	debug string // the debug listener (metrics), host:port
	srv   *testbin.Server
}

func startDiskNode(t *testing.T, overrides ...string) *diskNode {
	debug := "127.0.0.1:" + strconv.Itoa(testbin.FreePort(t))
	n := &diskNode{t: t, debug: debug, cfg: testbin.ServerConfig{DataDir: t.TempDir(),
		ClientPort: testbin.FreePort(t), ControllerPort: testbin.FreePort(t),
		Overrides: append([]string{"sluice.debug.listener=" + debug}, overrides...)}}
	n.start()
	return n
}

func (n *diskNode) start() { n.srv = testbin.StartServer(n.t, binaryPath, n.cfg) }

// stop stops the server cleanly (SIGTERM): its logs are flushed and the
// clean-shutdown marker written, so the restart trusts sealed segments.
func (n *diskNode) stop() {
	n.t.Helper()
	if err := n.srv.Stop(30 * time.Second); err != nil {
		n.t.Fatalf("stop: %v\n%s", err, n.srv.Logs())
	}
}

func (n *diskNode) client(opts ...kgo.Opt) *kgo.Client {
	n.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(n.srv.Addr()), kgo.ProducerBatchCompression(kgo.NoCompression())}, opts...)...)
	if err != nil {
		n.t.Fatal(err)
	}
	n.t.Cleanup(cl.Close)
	return cl
}

// partitionDir is the directory of topic's partition 0 in the log dir.
func (n *diskNode) partitionDir(topic string) string { return filepath.Join(n.cfg.DataDir, topic+"-0") }

// metrics is the server's /metrics page.
func (n *diskNode) metrics() string {
	n.t.Helper()
	resp, err := http.Get("http://" + n.debug + "/metrics")
	if err != nil {
		n.t.Fatalf("metrics: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		n.t.Fatal(err)
	}
	return string(body)
}

// createTopicWith creates a one-partition topic with configs (key, value pairs).
func createTopicWith(t *testing.T, ctx context.Context, cl *kgo.Client, topic string, configs ...string) {
	t.Helper()
	cfg := map[string]*string{}
	for i := 0; i+1 < len(configs); i += 2 {
		cfg[configs[i]] = kadm.StringPtr(configs[i+1])
	}
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, cfg, topic); err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
}

// produceNumbered writes batches of perBatch records of size bytes each to
// partition 0 of topic, one batch per request; record i's value starts
// with "record-<i>;".
func produceNumbered(t *testing.T, ctx context.Context, cl *kgo.Client, topic string, batches, perBatch, size int) {
	t.Helper()
	i := 0
	for range batches {
		recs := make([]*kgo.Record, perBatch)
		for j := range recs {
			v := make([]byte, size)
			rand.Read(v) // incompressible, so segments fill as sized
			copy(v, fmt.Sprintf("record-%d;", i))
			recs[j] = &kgo.Record{Topic: topic, Partition: 0, Value: v}
			i++
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("produce to %s: %v", topic, err)
		}
	}
}

// segmentBatch is one batch of a segment file.
type segmentBatch struct {
	pos, base, next int64
}

// segmentBases lists the base offsets of a partition directory's segments.
func segmentBases(t *testing.T, dir string) []int64 {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	var bases []int64
	for _, name := range names {
		base, err := strconv.ParseInt(filepath.Base(name)[:20], 10, 64)
		if err != nil {
			t.Fatalf("segment name %s: %v", name, err)
		}
		bases = append(bases, base)
	}
	return bases
}

func segmentFilePath(dir string, base int64, suffix string) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", base, suffix))
}

// segmentBatchList lists the batches of a segment file.
func segmentBatchList(t *testing.T, path string) []segmentBatch {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []segmentBatch
	pos := int64(0)
	if _, err := records.Batches(data, func(h records.Header, b []byte) error {
		out = append(out, segmentBatch{pos: pos, base: h.BaseOffset, next: h.NextOffset()})
		pos += int64(len(b))
		return nil
	}); err != nil {
		t.Fatalf("batches of %s: %v", path, err)
	}
	return out
}

// lookupTopicID looks the topic's id up.
func lookupTopicID(t *testing.T, ctx context.Context, cl *kgo.Client, topic string) [16]byte {
	t.Helper()
	topics, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := topics[topic]
	if !ok || d.Err != nil {
		t.Fatalf("metadata of %s: %+v", topic, d)
	}
	return d.ID
}

// fetchPartition0 sends one Fetch for partition 0 of topic at offset and returns
// the partition's error code and record bytes.
func fetchPartition0(t *testing.T, ctx context.Context, cl *kgo.Client, topic string, id [16]byte, offset int64) (int16, []byte) {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.SessionEpoch = -1, 100, 1, 1<<20, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, id
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = 0, offset, 1<<20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("fetch %s at %d: %v", topic, offset, err)
	}
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch %s at %d: %+v", topic, offset, resp)
	}
	p := resp.Topics[0].Partitions[0]
	return p.ErrorCode, p.RecordBatches
}

// partitionStartOffset lists partition 0's log start offset.
func partitionStartOffset(t *testing.T, ctx context.Context, cl *kgo.Client, topic string) int64 {
	t.Helper()
	offsets, err := kadm.NewClient(cl).ListStartOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	o, ok := offsets.Lookup(topic, 0)
	if !ok || o.Err != nil {
		t.Fatalf("start offset of %s-0: %+v", topic, o)
	}
	return o.Offset
}

// oneRecordBatch is one batch holding one record with value.
func oneRecordBatch(t *testing.T, value []byte) []byte {
	t.Helper()
	return recordstest.Batch(t, []recordstest.Record{{Timestamp: time.Now().UnixMilli(), Value: value}})
}

// recordsIn counts the records of the batches in data.
func recordsIn(t *testing.T, data []byte) int {
	t.Helper()
	n := 0
	if _, err := records.Batches(data, func(h records.Header, _ []byte) error {
		n += int(h.LastOffsetDelta) + 1
		return nil
	}); err != nil {
		t.Fatalf("fetched bytes: %v", err)
	}
	return n
}
