package sluicetest_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/sluicetest"
)

// A single node: produce a record and read it back.
func Example() {
	c, err := sluicetest.NewCluster(sluicetest.SeedTopics(1, "greetings"))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	cl, err := c.Client(kgo.ConsumeTopics("greetings"))
	if err != nil {
		panic(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "greetings", Value: []byte("hello")}).FirstErr(); err != nil {
		panic(err)
	}
	fetches := cl.PollFetches(ctx)
	fetches.EachRecord(func(r *kgo.Record) { fmt.Printf("%s at offset %d\n", r.Value, r.Offset) })
	// Output: hello at offset 0
}

// A control function fails the first Produce by closing its connection;
// the client retries and the record is written once.
func ExampleCluster_ControlKey() {
	c, err := sluicetest.NewCluster(sluicetest.SeedTopics(1, "orders"))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		fmt.Printf("failing a produce on node %d\n", c.CurrentNode())
		return nil, errors.New("injected failure"), true
	})
	cl, err := c.Client()
	if err != nil {
		panic(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("o-1")}).First()
	fmt.Println("produced at offset", r.Offset, "err:", err)
	// Output:
	// failing a produce on node 1
	// produced at offset 0 err: <nil>
}

// A killed node of three: an acks=all producer carries on once the
// partition's leadership moves.
func ExampleCluster_KillNode() {
	c, err := sluicetest.NewCluster(sluicetest.NumNodes(3), sluicetest.SeedTopics(1, "events"),
		// Fence a silent broker after 1 s (Kafka's default is 9 s).
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
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "events", Value: []byte("e-1")}).FirstErr(); err != nil {
		panic(err)
	}
	leader, err := c.Leader(ctx, "events", 0)
	if err != nil {
		panic(err)
	}
	if err := c.KillNode(leader); err != nil {
		panic(err)
	}
	r, err := cl.ProduceSync(ctx, &kgo.Record{Topic: "events", Value: []byte("e-2")}).First()
	fmt.Println("after the kill: offset", r.Offset, "err:", err)
	// Output: after the kill: offset 1 err: <nil>
}
