package integration

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const topic = "events"

func newClient(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// produce sends n records with values from..from+n-1 and waits for every
// acknowledgement (acks=all, idempotent: franz-go's defaults).
func produce(t *testing.T, ctx context.Context, addr string, from, n int) {
	t.Helper()
	cl := newClient(t, addr, kgo.DefaultProduceTopic(topic))
	recs := make([]*kgo.Record, n)
	for i := range recs {
		v := strconv.Itoa(from + i)
		recs[i] = &kgo.Record{Key: []byte("k" + v), Value: []byte(v)}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	cl.Close()
}

// consumeAll reads the topic from offset 0 until want records arrived and
// checks each value appears exactly once.
func consumeAll(t *testing.T, ctx context.Context, addr string, want int) {
	t.Helper()
	cl := newClient(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := make(map[string]int, want)
	total := 0
	for total < want {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records before the deadline", total, want)
		}
		fetches.EachError(func(topic string, p int32, err error) {
			t.Fatalf("fetch %s-%d: %v", topic, p, err)
		})
		fetches.EachRecord(func(r *kgo.Record) {
			seen[string(r.Value)]++
			total++
		})
	}
	for i := range want {
		if n := seen[strconv.Itoa(i)]; n != 1 {
			t.Fatalf("record %d read %d times", i, n)
		}
	}
	if total != want {
		t.Fatalf("read %d records, want %d", total, want)
	}
	cl.Close()
}

func endOffsetsSum(t *testing.T, ctx context.Context, adm *kadm.Client) int64 {
	t.Helper()
	offsets, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	offsets.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			t.Fatalf("list offsets %s-%d: %v", o.Topic, o.Partition, o.Err)
		}
		sum += o.Offset
	})
	return sum
}

func topicConfig(t *testing.T, ctx context.Context, adm *kadm.Client, name string) string {
	t.Helper()
	rc, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	r, err := rc.On(topic, nil)
	if err != nil || r.Err != nil {
		t.Fatalf("describe configs: %v %v", err, r.Err)
	}
	for _, c := range r.Configs {
		if c.Key == name && c.Value != nil {
			return *c.Value
		}
	}
	t.Fatalf("config %s not described", name)
	return ""
}

// TestProduceConsumeRestartAndKill is a user's first session: create a
// topic, produce, consume, configure, delete; then a clean restart and a
// kill -9, after which every acknowledged record is still there.
func TestProduceConsumeRestartAndKill(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dataDir := t.TempDir()
	port := freePort(t)
	srv := startServer(t, dataDir, port)

	adm := kadm.NewClient(newClient(t, srv.addr))
	created, err := adm.CreateTopics(ctx, 3, 1, nil, topic, "scratch")
	if err != nil || created[topic].Err != nil || created["scratch"].Err != nil {
		t.Fatalf("create topics: %v %+v", err, created)
	}
	produce(t, ctx, srv.addr, 0, 1000)
	consumeAll(t, ctx, srv.addr, 1000)
	if sum := endOffsetsSum(t, ctx, adm); sum != 1000 {
		t.Fatalf("end offsets sum to %d, want 1000", sum)
	}
	if v := topicConfig(t, ctx, adm, "retention.ms"); v != "604800000" {
		t.Fatalf("retention.ms is %s, want Kafka's default 604800000", v)
	}
	alter, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: kadm.StringPtr("86400000")}}, topic)
	if err != nil || alter[0].Err != nil {
		t.Fatalf("alter configs: %v %+v", err, alter)
	}
	if v := topicConfig(t, ctx, adm, "retention.ms"); v != "86400000" {
		t.Fatalf("retention.ms is %s after the change", v)
	}
	deleted, err := adm.DeleteTopics(ctx, "scratch")
	if err != nil || deleted["scratch"].Err != nil {
		t.Fatalf("delete topic: %v %+v", err, deleted)
	}

	srv.stop()
	if _, err := os.Stat(filepath.Join(dataDir, ".kafka_cleanshutdown")); err != nil {
		t.Fatalf("no clean shutdown marker: %v", err)
	}
	srv = startServer(t, dataDir, port)
	adm = kadm.NewClient(newClient(t, srv.addr))
	consumeAll(t, ctx, srv.addr, 1000)
	if v := topicConfig(t, ctx, adm, "retention.ms"); v != "86400000" {
		t.Fatalf("retention.ms is %s after a restart", v)
	}
	md, err := adm.Metadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := md.Topics["scratch"]; ok {
		t.Fatal("deleted topic is back after a restart")
	}

	produce(t, ctx, srv.addr, 1000, 500)
	srv.kill()
	srv = startServer(t, dataDir, port)
	consumeAll(t, ctx, srv.addr, 1500)
	adm = kadm.NewClient(newClient(t, srv.addr))
	if sum := endOffsetsSum(t, ctx, adm); sum != 1500 {
		t.Fatalf("end offsets sum to %d after kill -9, want 1500", sum)
	}
	srv.stop()
}
