package embed_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/sluicetest"
)

// Start a one-node cluster, produce three records and consume them.
func Example_produceConsume() {
	c, err := sluicetest.NewCluster(sluicetest.SeedTopics(1, "orders"))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	producer, err := c.Client()
	if err != nil {
		panic(err)
	}
	defer producer.Close()
	for _, v := range []string{"o-1", "o-2", "o-3"} {
		if err := producer.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte(v)}).FirstErr(); err != nil {
			panic(err)
		}
	}

	consumer, err := c.Client(kgo.ConsumeTopics("orders"), kgo.ConsumerGroup("billing"))
	if err != nil {
		panic(err)
	}
	defer consumer.Close()
	for n := 0; n < 3; {
		fetches := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			panic(err)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			fmt.Printf("%s@%d\n", r.Value, r.Offset)
			n++
		})
	}
	// Output:
	// o-1@0
	// o-2@1
	// o-3@2
}

// A request hook fails the first Produce (the node closes the client's
// connection); franz-go retries it and the record is written exactly once.
func Example_failFirstProduce() {
	c, err := sluicetest.NewCluster(sluicetest.SeedTopics(1, "payments"))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	var produces atomic.Int32
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl() // see every Produce, fail only the first
		if produces.Add(1) == 1 {
			return nil, errors.New("injected: connection closed"), true
		}
		return nil, nil, false // let the node serve it
	})
	cl, err := c.Client()
	if err != nil {
		panic(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := cl.ProduceSync(ctx, &kgo.Record{Topic: "payments", Value: []byte("p-1")}).First()
	fmt.Printf("offset %d, err %v, produce requests %d\n", r.Offset, err, produces.Load())
	// Output: offset 0, err <nil>, produce requests 2
}

// Kill the leader of a partition of a 3-node cluster: an acks=all producer
// keeps succeeding once the controller moves the leadership.
func Example_killLeader() {
	c, err := sluicetest.NewCluster(sluicetest.NumNodes(3), sluicetest.SeedTopics(1, "events"),
		sluicetest.Config("min.insync.replicas", "2"),
		// Fence a silent broker after 1 s instead of Kafka's 9 s.
		sluicetest.Config("broker.session.timeout.ms", "1000"),
		sluicetest.Config("broker.heartbeat.interval.ms", "100"))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	cl, err := c.Client(kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		panic(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	produce := func(v string) {
		r, err := cl.ProduceSync(ctx, &kgo.Record{Topic: "events", Value: []byte(v)}).First()
		fmt.Printf("%s: offset %d, err %v\n", v, r.Offset, err)
	}
	produce("before")
	leader, err := c.Leader(ctx, "events", 0)
	if err != nil {
		panic(err)
	}
	if err := c.KillNode(leader); err != nil {
		panic(err)
	}
	produce("after")
	newLeader, err := c.Leader(ctx, "events", 0)
	fmt.Println("leader moved:", err == nil && newLeader != leader)
	// Output:
	// before: offset 0, err <nil>
	// after: offset 1, err <nil>
	// leader moved: true
}

// The same in a test: Start closes the cluster when the test ends.
func TestWithStart(t *testing.T) {
	c := sluicetest.Start(t, sluicetest.InMemory(), sluicetest.SeedTopics(3, "t"))
	cl, err := c.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}
