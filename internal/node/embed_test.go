package node

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/api"
	"github.com/sluice-io/sluice/internal/commitlog/logdir"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/vfs"
)

// An embedding's options: the logs live in the given FS (not on disk), and
// the request hook sees each request first: it closes the connection of
// the first Produce, which the client retries.
func TestEmbeddingOptions(t *testing.T) {
	dir := t.TempDir()
	cfg, err := config.Parse("", map[string]string{
		"log.dirs":  dir,
		"listeners": "PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0",
	})
	if err != nil {
		t.Fatal(err)
	}
	mem := vfs.NewMem()
	var produces atomic.Int32
	hook := func(_ context.Context, req *api.Request) (api.Response, bool) {
		if req.Header.APIKey == 0 && produces.Add(1) == 1 {
			return api.CloseConnection(errors.New("first produce refused")), true
		}
		return api.Response{}, false
	}
	n, err := New(cfg, nil, nil, WithFS(mem), WithRequestHook(hook))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("stop: %v", err)
		}
	}()
	select {
	case <-n.Ready():
	case err := <-done:
		t.Fatalf("node stopped at start: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("node not ready after 20s")
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr("PLAINTEXT").String()), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	pctx, pcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer pcancel()
	if err := cl.ProduceSync(pctx, &kgo.Record{Topic: "embed", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	if got := produces.Load(); got < 2 {
		t.Fatalf("hook saw %d produce requests, want the refused one and its retry", got)
	}
	if _, err := mem.Stat(filepath.Join(dir, "embed-0")); err != nil {
		t.Fatalf("partition dir not in the in-memory FS: %v", err)
	}
	if _, err := vfs.Default.Stat(filepath.Join(dir, "embed-0")); err == nil {
		t.Fatal("partition dir written to disk despite WithFS")
	}
}

// WithRaftTick reaches the metadata quorum; without it the quorum keeps
// its default tick.
func TestWithRaftTick(t *testing.T) {
	for _, tc := range []struct {
		opts []Option
		want time.Duration
	}{
		{nil, 100 * time.Millisecond},
		{[]Option{WithRaftTick(7 * time.Millisecond)}, 7 * time.Millisecond},
	} {
		cfg, err := config.Parse("", map[string]string{
			"log.dirs":                 t.TempDir(),
			"process.roles":            "broker,controller",
			"node.id":                  "1",
			"controller.quorum.voters": "1@127.0.0.1:1,2@127.0.0.1:2,3@127.0.0.1:3",
			"listeners":                "PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:1",
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := logdir.Format(vfs.Default, cfg.LogDirs(), "AAAAAAAAAAAAAAAAAAAAAA", 1, false); err != nil {
			t.Fatal(err)
		}
		n, err := New(cfg, nil, nil, tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		got := n.meta.driver.TickInterval()
		n.Close()
		if got != tc.want {
			t.Errorf("tick %s, want %s", got, tc.want)
		}
	}
}

// A node whose only log dir fails calls the embedding's halt instead of
// ending the process.
func TestWithHaltReplacesExit(t *testing.T) {
	cfg, err := config.Parse("", map[string]string{
		"log.dirs":  t.TempDir(),
		"listeners": "PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0",
	})
	if err != nil {
		t.Fatal(err)
	}
	efs := vfs.NewErrorFS(vfs.Default, nil)
	halted := make(chan struct{})
	var once sync.Once
	n, err := New(cfg, nil, nil, WithFS(efs), WithHalt(func() { once.Do(func() { close(halted) }) }))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	defer func() {
		cancel()
		<-done // its stop fails: the disk does
	}()
	select {
	case <-n.Ready():
	case err := <-done:
		t.Fatalf("node stopped at start: %v", err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr("PLAINTEXT").String()), kgo.AllowAutoTopicCreation(),
		kgo.RecordDeliveryTimeout(5*time.Second), kgo.DisableIdempotentWrite()) // an idempotent batch of unknown outcome never fails
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	pctx, pcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer pcancel()
	if err := cl.ProduceSync(pctx, &kgo.Record{Topic: "embed", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("produce before the failure: %v", err)
	}
	efs.SetInjector(vfs.OnlyOps(vfs.FailPaths(func(string) bool { return true }, syscall.EIO), vfs.OpWrite))
	_ = cl.ProduceSync(pctx, &kgo.Record{Topic: "embed", Value: []byte("w")}).FirstErr()
	select {
	case <-halted:
	case <-pctx.Done():
		t.Fatal("the node never halted after its only log dir failed")
	}
}
