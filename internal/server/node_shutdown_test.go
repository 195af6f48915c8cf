package server_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/internal/config"
	"sluice/internal/node"
)

// A consumer's fetch parked for max.wait.ms=30s in a real node's purgatory
// must not hold the node's stop: the server answers it when draining begins.
func TestNodeStopAnswersParkedFetch(t *testing.T) {
	cfg, err := config.Parse("", map[string]string{
		"log.dirs":                 t.TempDir(),
		"listeners":                "PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:19193",
		"controller.quorum.voters": "1@127.0.0.1:19193",
	})
	if err != nil {
		t.Fatal(err)
	}
	n, err := node.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stopNode := context.WithCancel(context.Background())
	defer stopNode()
	runErr := make(chan error, 1)
	go func() { runErr <- n.Run(runCtx) }()
	select {
	case <-n.Ready():
	case err := <-runErr:
		t.Fatalf("node stopped at start: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("node not ready after 20s")
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr("PLAINTEXT").String()), kgo.RequestRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
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
	// The fetch is parked once its request has been read and found no data;
	// give it a moment to get there (if it is not parked yet, the stop is
	// trivially fast and the test proves less, never wrongly fails).
	time.Sleep(300 * time.Millisecond)

	began := time.Now()
	stopNode()
	if err := <-runErr; err != nil {
		t.Fatalf("node stop: %v", err)
	}
	took := time.Since(began)
	a := <-answered
	t.Logf("node stopped in %v with a 30s fetch parked; client got err=%v", took, a.err)
	if took > 3*time.Second {
		t.Fatalf("node stop took %v with a fetch parked; want well under the fetch's 30s max wait", took)
	}
	if a.err == nil {
		resp := a.resp.(*kmsg.FetchResponse)
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
			t.Fatalf("parked fetch answered with %+v, want one empty partition without error", resp)
		}
	}
}
