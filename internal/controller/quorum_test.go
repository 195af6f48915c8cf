package controller

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/quorum"
	"github.com/sluice-io/sluice/internal/vfs"
)

// startNode runs a single-voter quorum on dir with a loader as its state
// machine, as a combined node does.
func startNode(t *testing.T, dir string) (*quorum.Driver, *quorum.LogEntryStore, *metadata.Loader) {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	store, err := quorum.OpenLogEntryStore(vfs.Default, dir, clock.Real{}, logger)
	if err != nil {
		t.Fatal(err)
	}
	loader := metadata.NewLoader(logger)
	d, err := quorum.New(quorum.Options{
		NodeID: 1, Voters: []int32{1}, TickInterval: 10 * time.Millisecond, FS: vfs.Default, Dir: dir, Store: store,
		Apply: func(c quorum.Committed) error { return loader.Apply(c.Offset, c.Epoch, c.Data) },
	})
	if err != nil {
		t.Fatal(err)
	}
	d.Start()
	select {
	case <-d.Replayed():
	case <-time.After(10 * time.Second):
		t.Fatal("replay did not finish")
	}
	return d, store, loader
}

func stopNode(t *testing.T, d *quorum.Driver, store *quorum.LogEntryStore) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestMetadataSurvivesRestart drives the controller through the quorum on a
// real directory, restarts, and checks the replayed image is the same.
func TestMetadataSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	d, store, loader := startNode(t, dir)
	if _, err := d.Propose(ctx, metadata.EncodeRecords(metadata.BootstrapRecords("cluster-1", 1))); err != nil {
		t.Fatal(err)
	}
	c := New(Options{NumPartitions: 3, DefaultReplicationFactor: 1, Configs: testPolicy{}})
	ex := NewRunner(loader.Image, d)

	reg := kmsg.NewPtrBrokerRegistrationRequest()
	reg.BrokerID, reg.ClusterID, reg.IncarnationID = 1, "cluster-1", kafka.UUID{7}
	regResp, err := execute(ctx, ex, func(im *metadata.Image) ([]metadata.Record, *kmsg.BrokerRegistrationResponse) {
		return c.RegisterBroker(im, reg)
	})
	if err != nil || regResp.ErrorCode != 0 {
		t.Fatalf("register: %v %+v", err, regResp)
	}
	if _, err := execute(ctx, ex, func(im *metadata.Image) ([]metadata.Record, struct{}) {
		recs, err := c.UnfenceBroker(im, 1, regResp.BrokerEpoch)
		if err != nil {
			t.Errorf("unfence: %v", err)
		}
		return recs, struct{}{}
	}); err != nil {
		t.Fatal(err)
	}
	create := kmsg.NewPtrCreateTopicsRequest()
	for _, name := range []string{"orders", "payments"} {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, -1, -1
		create.Topics = append(create.Topics, rt)
	}
	// The same request twice: the second runs on the image holding the first.
	for i, wantCode := range []int16{0, 36} {
		resp, err := execute(ctx, ex, func(im *metadata.Image) ([]metadata.Record, *kmsg.CreateTopicsResponse) {
			return c.CreateTopics(im, create)
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, rt := range resp.Topics {
			if rt.ErrorCode != wantCode {
				t.Fatalf("create #%d %s: code %d, want %d", i, rt.Topic, rt.ErrorCode, wantCode)
			}
		}
	}
	pid, err := execute(ctx, ex, func(im *metadata.Image) ([]metadata.Record, *kmsg.AllocateProducerIDsResponse) {
		req := kmsg.NewPtrAllocateProducerIDsRequest()
		req.BrokerID, req.BrokerEpoch = 1, regResp.BrokerEpoch
		return c.AllocateProducerIDs(im, req)
	})
	if err != nil || pid.ErrorCode != 0 {
		t.Fatalf("allocate producer ids: %v %+v", err, pid)
	}
	before := loader.Image()
	if p, ok := before.Partition(kafka.TopicPartition{Topic: "payments", Partition: 2}); !ok || p.Leader != 1 {
		t.Fatalf("payments-2 = %+v, %v\n%s", p, ok, before)
	}
	stopNode(t, d, store)

	d, store, loader = startNode(t, dir)
	defer stopNode(t, d, store)
	after := loader.Image()
	if before.String() != after.String() {
		t.Fatalf("image after restart differs:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if after.NextProducerID() != ProducerIDBlockSize {
		t.Fatalf("next producer id %d", after.NextProducerID())
	}
}

func execute[R any](ctx context.Context, r *Runner, op func(*metadata.Image) ([]metadata.Record, R)) (R, error) {
	resp, _, err := Run(ctx, r, op)
	return resp, err
}

type refusingProposer struct{}

func (refusingProposer) ProposeAfter(context.Context, []byte, int64) (int64, error) {
	return -1, quorum.NotLeaderError{Leader: 2}
}

func TestRunReportsNotController(t *testing.T) {
	loader := metadata.NewLoader(slog.New(slog.DiscardHandler))
	r := NewRunner(loader.Image, refusingProposer{})
	_, err := execute(context.Background(), r, func(*metadata.Image) ([]metadata.Record, int) {
		return metadata.BootstrapRecords("c", 1), 1
	})
	if !errors.Is(err, ErrNotController) || !errors.Is(err, quorum.ErrNotLeader) {
		t.Fatalf("err = %v, want ErrNotController wrapping quorum.ErrNotLeader", err)
	}
	// No records: nothing to commit, the response comes back at once.
	got, err := execute(context.Background(), r, func(*metadata.Image) ([]metadata.Record, int) { return nil, 7 })
	if err != nil || got != 7 {
		t.Fatalf("got %d, %v", got, err)
	}
}
