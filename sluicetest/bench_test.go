package sluicetest

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// benchStart measures NewCluster until a first record is acknowledged
// (acks=all, the topic auto-created by the produce), then closes it.
func benchStart(b *testing.B, opts ...Opt) {
	for b.Loop() {
		c, err := NewCluster(opts...)
		if err != nil {
			b.Fatal(err)
		}
		cl, err := c.Client(kgo.AllowAutoTopicCreation(), kgo.RequiredAcks(kgo.AllISRAcks()))
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err = cl.ProduceSync(ctx, &kgo.Record{Topic: "bench", Value: []byte("v")}).FirstErr()
		cancel()
		b.StopTimer()
		cl.Close()
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

func BenchmarkStartSingleNode(b *testing.B) { benchStart(b) }

func BenchmarkStartSingleNodeInMemory(b *testing.B) { benchStart(b, InMemory()) }

func BenchmarkStartThreeNodes(b *testing.B) { benchStart(b, NumNodes(3)) }
