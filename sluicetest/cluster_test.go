package sluicetest

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func produce(t *testing.T, cl *kgo.Client, topic string, values ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, v := range values {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("produce %q: %v", v, err)
		}
	}
}

func client(t *testing.T, c *Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := c.Client(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// consume reads n records of topic from the start.
func consume(t *testing.T, c *Cluster, topic string, n int) []string {
	t.Helper()
	cl := client(t, c, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []string
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records of %s: %v", len(out), n, topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, string(r.Value)) })
	}
	return out
}

func TestSingleNodeProduceConsume(t *testing.T) {
	c := Start(t, SeedTopics(1, "t"))
	cl := client(t, c)
	produce(t, cl, "t", "a", "b")
	if got := consume(t, c, "t", 2); got[0] != "a" || got[1] != "b" {
		t.Fatalf("consumed %q", got)
	}
}

func TestThreeNodesProduceConsume(t *testing.T) {
	c := Start(t, NumNodes(3), SeedTopics(3, "t"))
	cl := client(t, c, kgo.RequiredAcks(kgo.AllISRAcks()))
	produce(t, cl, "t", "a", "b", "c")
	if got := consume(t, c, "t", 3); len(got) != 3 {
		t.Fatalf("consumed %q", got)
	}
}
