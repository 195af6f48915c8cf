package replication

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/records/recordstest"
	"github.com/sluice-io/sluice/internal/replication/replicationtest"
	"github.com/sluice-io/sluice/internal/vfs"
)

var testStart = time.UnixMilli(1_700_000_000_000)

type fixture struct {
	rm   *ReplicaManager
	logs *replicationtest.MemLogs
	clk  *clock.Manual
}

// setTopicConfig pushes a topic's data-plane configuration, as the broker
// does when its configs change.
func (f *fixture) setTopicConfig(topic string, cfg TopicConfig) {
	f.rm.UpdateTopicSettings(map[string]TopicSettings{topic: {Data: cfg, Log: f.logs.Options}})
}

// topicConfig is the configuration a partition of topic holds.
func (f *fixture) topicConfig(topic string) TopicConfig {
	return f.rm.topicSettings(topic).Data
}

// newFixture hosts topic "t" (2 partitions, leader epoch 5) and "c"
// (1 partition) on broker 1, in an FS that can be made to fail.
func newFixture(t testing.TB, fsys vfs.FS) *fixture {
	t.Helper()
	return newFixtureWith(t, fsys, nil)
}

// newFixtureWith is newFixture with the manager's options changed by edit
// (nil: none).
func newFixtureWith(t testing.TB, fsys vfs.FS, edit func(*Options)) *fixture {
	t.Helper()
	if fsys == nil {
		fsys = vfs.NewMem()
	}
	f := &fixture{clk: clock.NewManual(testStart)}
	f.logs = replicationtest.NewMemLogs(fsys, f.clk)
	opts := Options{
		BrokerID: 1, FS: fsys, Logs: f.logs, Clock: f.clk,
		Logger:          slog.New(slog.NewTextHandler(io.Discard, nil)),
		DefaultSettings: &TopicSettings{Data: DefaultTopicConfig(), Log: f.logs.Options},
	}
	if edit != nil {
		edit(&opts)
	}
	rm, err := NewReplicaManager(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.rm = rm
	delta, image, err := replicationtest.Image(1,
		replicationtest.Topic{Name: "t", ID: replicationtest.TopicID(1), Partitions: 2, LeaderEpoch: 5},
		replicationtest.Topic{Name: "c", ID: replicationtest.TopicID(2), Partitions: 1, LeaderEpoch: 0})
	if err != nil {
		t.Fatal(err)
	}
	rm.ApplyDelta(delta, image)
	t.Cleanup(func() {
		rm.Close()
		if err := f.logs.Close(); err != nil {
			t.Errorf("close logs: %v", err)
		}
	})
	return f
}

func tp(topic string, p int32) kafka.TopicPartition {
	return kafka.TopicPartition{Topic: topic, Partition: p}
}

// batch builds a plain batch of n records whose timestamps start at ts.
func batch(t testing.TB, n int, ts int64) []byte {
	t.Helper()
	return recordstest.Batch(t, recordstest.N(n, func(i int) recordstest.Record {
		return recordstest.Record{Timestamp: ts + int64(i), Key: []byte{byte(i)}, Value: []byte("value")}
	}))
}

func (f *fixture) produce(t *testing.T, acks int16, parts ...AppendPartition) []PartitionAppendResult {
	t.Helper()
	return f.rm.AppendRecords(t.Context(), AppendRequest{RequiredAcks: acks, Timeout: 5 * time.Second, ProduceVersion: 11, Partitions: parts})
}

func wantCode(t *testing.T, what string, err error, want *kerr.Error) {
	t.Helper()
	var code int16
	if want != nil {
		code = want.Code
	}
	if got := ErrorCode(err); got != code {
		t.Fatalf("%s: error %v (code %d), want code %d (%v)", what, err, got, code, want)
	}
}
