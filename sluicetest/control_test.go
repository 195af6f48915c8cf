package sluicetest

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// A kept control function sees every Produce, on the node that leads the
// partition, and passes it on.
func TestControlSeesRequests(t *testing.T) {
	c := Start(t, NumNodes(3), SeedTopics(1, "t"))
	var seen atomic.Int32
	var node atomic.Int32
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		seen.Add(1)
		node.Store(c.CurrentNode())
		return nil, nil, false
	})
	cl := client(t, c)
	produce(t, cl, "t", "a", "b", "c")
	if seen.Load() < 3 {
		t.Fatalf("saw %d produce requests, want 3", seen.Load())
	}
	md, err := kadm.NewClient(cl).Metadata(ctxT(t), "t")
	if err != nil {
		t.Fatal(err)
	}
	if leader := md.Topics["t"].Partitions[0].Leader; leader != node.Load() {
		t.Fatalf("produce seen on node %d, leader is %d", node.Load(), leader)
	}
	if got := consume(t, c, "t", 3); len(got) != 3 {
		t.Fatalf("consumed %q", got)
	}
}

// A control function answers ListOffsets itself: the client sees its
// offset, not the log's.
func TestControlAnswers(t *testing.T) {
	c := Start(t, SeedTopics(1, "t"))
	c.ControlKey(int16(kmsg.ListOffsets), func(r kmsg.Request) (kmsg.Response, error, bool) {
		req := r.(*kmsg.ListOffsetsRequest)
		resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewListOffsetsResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewListOffsetsResponseTopicPartition()
				sp.Partition, sp.Offset, sp.LeaderEpoch = rp.Partition, 12345, 0
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	adm := kadm.NewClient(client(t, c))
	ends, err := adm.ListEndOffsets(ctxT(t), "t")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := ends.Lookup("t", 0); o.Err != nil || o.Offset != 12345 {
		t.Fatalf("end offset %+v, want the control function's 12345", o)
	}
	// It ran once: the next ListOffsets is the log's.
	ends, err = adm.ListEndOffsets(ctxT(t), "t")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := ends.Lookup("t", 0); o.Err != nil || o.Offset != 0 {
		t.Fatalf("end offset %+v after the control function, want 0", o)
	}
}

// A control function fails the first Produce (its connection closes); the
// client retries on a new connection and the record is written once.
func TestControlFailsRequest(t *testing.T) {
	c := Start(t, SeedTopics(1, "t"))
	var produces atomic.Int32
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		produces.Add(1)
		return nil, errors.New("injected"), true
	})
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		produces.Add(1)
		return nil, nil, false
	})
	produce(t, client(t, c), "t", "v")
	if produces.Load() < 2 {
		t.Fatalf("%d produce requests, want the failed one and a retry", produces.Load())
	}
	if got := consume(t, c, "t", 1); len(got) != 1 || got[0] != "v" {
		t.Fatalf("consumed %q", got)
	}
}

// A dropped Produce gets no answer: the client times the request out and
// retries; the idempotent producer writes the record once.
func TestControlDropsRequest(t *testing.T) {
	c := Start(t, SeedTopics(1, "t"))
	var dropped atomic.Bool
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		dropped.Store(true)
		return nil, nil, true
	})
	cl := client(t, c, kgo.RequestTimeoutOverhead(500*time.Millisecond))
	produce(t, cl, "t", "v")
	produce(t, cl, "t", "w")
	if !dropped.Load() {
		t.Fatal("the control function never ran")
	}
	if got := consume(t, c, "t", 2); got[0] != "v" || got[1] != "w" {
		t.Fatalf("consumed %q, want v then w, once each", got)
	}
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctxT(t), "t")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := ends.Lookup("t", 0); o.Offset != 2 {
		t.Fatalf("end offset %d, want 2 (the dropped request's retry written once)", o.Offset)
	}
}

// SleepControl holds a Produce unanswered while other requests are
// served; it completes once woken.
func TestControlDelaysRequest(t *testing.T) {
	c := Start(t, SeedTopics(1, "t"))
	entered, release := make(chan struct{}), make(chan struct{})
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		close(entered)
		c.SleepControl(func() { <-release })
		return nil, nil, false
	})
	cl := client(t, c)
	done := make(chan error, 1)
	go func() {
		done <- cl.ProduceSync(ctxT(t), &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr()
	}()
	<-entered
	if _, err := kadm.NewClient(client(t, c)).ListEndOffsets(ctxT(t), "t"); err != nil {
		t.Fatalf("another request while the produce sleeps: %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("produce finished while its request slept: %v", err)
	default:
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("produce after wake-up: %v", err)
	}
}
