package node

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"sluice/internal/metadata"
	"sluice/internal/quorum"
	"sluice/internal/vfs"
)

// startSingleVoter runs a one-voter quorum over memory with a loader.
func startSingleVoter(t *testing.T) (*quorum.Driver, *metadata.Loader) {
	t.Helper()
	loader := metadata.NewLoader(slog.New(slog.DiscardHandler))
	fsys := vfs.NewMem()
	if err := fsys.MkdirAll("/meta", 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := quorum.New(quorum.Options{
		NodeID: 1, Voters: []int32{1}, FS: fsys, Dir: "/meta", Store: quorum.NewMemoryEntryStore(),
		Apply: func(c quorum.Committed) error { return loader.Apply(c.Offset, c.Epoch, c.Data) },
	})
	if err != nil {
		t.Fatal(err)
	}
	d.Start()
	t.Cleanup(func() { d.Stop(context.Background()) })
	deadline := time.Now().Add(10 * time.Second)
	for !d.Status().IsLeader {
		if time.Now().After(deadline) {
			t.Fatalf("single voter never led: %v", d.Err())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return d, loader
}

func TestControlLoopAppliesBeforeAnswering(t *testing.T) {
	d, loader := startSingleVoter(t)
	loop := newControlLoop(d, loader.Image)
	loop.start()
	ctx := context.Background()
	if err := loop.submit(ctx, func(im *metadata.Image) ([]metadata.Record, error) {
		return metadata.BootstrapRecords("c1", 20), nil
	}); err != nil {
		t.Fatal(err)
	}
	if loader.Image().ClusterID() != "c1" {
		t.Fatal("submit returned before its records were applied")
	}
	// Each operation sees the image of the previous one.
	var seen string
	if err := loop.submit(ctx, func(im *metadata.Image) ([]metadata.Record, error) {
		seen = im.ClusterID()
		return nil, nil
	}); err != nil || seen != "c1" {
		t.Fatalf("second operation saw cluster %q (%v)", seen, err)
	}
	refused := errors.New("refused")
	if err := loop.submit(ctx, func(*metadata.Image) ([]metadata.Record, error) { return nil, refused }); !errors.Is(err, refused) {
		t.Fatalf("a failing operation returned %v", err)
	}
	loop.stop()
	if err := loop.submit(ctx, func(*metadata.Image) ([]metadata.Record, error) { return nil, nil }); !errors.Is(err, errControllerStopped) {
		t.Fatalf("submit after stop: %v", err)
	}
}
