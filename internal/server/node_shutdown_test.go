package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/testbin"
)

// A consumer's fetch parked for max.wait.ms=30s in a real node's purgatory
// must not hold the node's stop: the server answers it when draining begins.
// The node runs as the real binary (this package may not import the node).
func TestNodeStopAnswersParkedFetch(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the sluice binary")
	}
	addr, stop := startSluiceBinary(t)
	fetchSent := make(chan struct{}, 1)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestRetries(0), kgo.WithHooks(fetchWriteHook(fetchSent)))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	created, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "parked")
	if err != nil {
		t.Fatal(err)
	}

	fetch := kmsg.NewPtrFetchRequest()
	fetch.MaxWaitMillis = 30_000
	fetch.MinBytes = 1
	fetch.MaxBytes = 1 << 20
	ft := kmsg.NewFetchRequestTopic()
	// kgo sends its highest version, which names topics by id.
	ft.Topic = "parked"
	ft.TopicID = created.ID
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 1 << 20
	ft.Partitions = append(ft.Partitions, fp)
	fetch.Topics = append(fetch.Topics, ft)
	type answer struct {
		resp kmsg.Response
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := cl.Broker(1).Request(ctx, fetch)
		answered <- answer{resp, err}
	}()
	// The fetch is parked once the server has read it and found no data:
	// wait until the client has written it (if the server has not parked
	// it yet, the stop is trivially fast and the test proves less, never
	// wrongly fails).
	select {
	case <-fetchSent:
	case <-ctx.Done():
		t.Fatal("the fetch was never sent")
	}

	took := stop()
	a := <-answered
	t.Logf("node stopped in %v with a 30s fetch parked; client got err=%v", took, a.err)
	// Without the drain cancelling parked waits, the stop takes the
	// server's 10s shutdown grace; with it, a fraction of a second plus
	// flushing the logs.
	if took > 5*time.Second {
		t.Fatalf("node stop took %v with a fetch parked; want well under the fetch's 30s max wait", took)
	}
	if a.err == nil {
		resp := a.resp.(*kmsg.FetchResponse)
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
			t.Fatalf("parked fetch answered with %+v, want one empty partition without error", resp)
		}
	}
}

// fetchWriteHook signals sent once a Fetch request is on the wire.
type fetchWriteHook chan struct{}

func (h fetchWriteHook) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key != kmsg.Fetch.Int16() || err != nil {
		return
	}
	select {
	case h <- struct{}{}:
	default:
	}
}

// startSluiceBinary builds ./cmd/sluice, runs `sluice server` on free ports
// and returns its address and a stop that sends SIGTERM and returns how long
// the process took to exit.
func startSluiceBinary(t *testing.T) (string, func() time.Duration) {
	t.Helper()
	srv := testbin.StartServer(t, testbin.Build(t), testbin.ServerConfig{DataDir: t.TempDir()})
	var stopped bool
	stop := func() time.Duration {
		if stopped {
			return 0
		}
		stopped = true
		began := time.Now()
		if err := srv.Stop(30 * time.Second); err != nil {
			t.Errorf("sluice server: %v", err)
		}
		return time.Since(began)
	}
	t.Cleanup(func() { stop() })
	return srv.Addr(), stop
}
