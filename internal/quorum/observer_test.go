package quorum

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/protocol"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/testutil"
	"github.com/sluice-io/sluice/internal/transport"
	"github.com/sluice-io/sluice/internal/vfs"
)

// serveKafka is a minimal Kafka server for observer tests (quorum may not
// use the real one): it answers ApiVersions with Fetch and FetchSnapshot
// and hands every other request to handle, one connection at a time in
// order; a nil answer closes the connection. It returns the address.
func serveKafka(t *testing.T, handle func(ctx context.Context, req kmsg.Request) kmsg.Response) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() { serveKafkaConn(ctx, c, handle) })
		}
	})
	t.Cleanup(func() {
		cancel()
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

func serveKafkaConn(ctx context.Context, c net.Conn, handle func(context.Context, kmsg.Request) kmsg.Response) {
	defer c.Close()
	for {
		frame, err := protocol.ReadFrame(c, 1<<20, nil)
		if err != nil {
			return
		}
		h, body, err := protocol.ParseRequestHeader(frame)
		if err != nil {
			return
		}
		req, err := protocol.DecodeRequestBody(h, body)
		if err != nil {
			return
		}
		var resp kmsg.Response
		if h.APIKey == protocol.ApiVersionsKey {
			resp = stubAPIVersions()
		} else if resp = handle(ctx, req); resp == nil {
			return
		}
		resp.SetVersion(h.APIVersion)
		out := protocol.AppendResponseFrame(nil, h.CorrelationID, protocol.ResponseHeaderFlexible(h.APIKey, h.APIVersion), resp)
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}

func stubAPIVersions() kmsg.Response {
	resp := kmsg.NewPtrApiVersionsResponse()
	for _, v := range [][3]int16{{1, 4, 16}, {18, 0, 4}, {59, 0, 1}} {
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = v[0], v[1], v[2]
		resp.ApiKeys = append(resp.ApiKeys, k)
	}
	return resp
}

// newTestObserver is an observer of the one voter 0 at addr, over a pool of
// its own, applying into applied; it is not started.
func newTestObserver(t *testing.T, addr string, applied *appliedLog) *Observer {
	t.Helper()
	peers := transport.NewPool("quorum-observer-test")
	t.Cleanup(peers.Close)
	return NewObserver(ObserverOptions{
		NodeID: 9, Voters: map[int32]string{0: addr}, Peers: peers, Apply: applied.apply,
		Restore: func(offset int64, _ int32, _ []byte) error {
			t.Errorf("restored a snapshot at %d", offset)
			return nil
		},
	})
}

// TestObserverSnapshotErrorsMapped: pulling a snapshot the controller no
// longer has (a newer one replaced it) is errSnapshotChanged, so the loop
// fetches again to learn the new id; NOT_LEADER_OR_FOLLOWER points the
// observer at the named leader; any other error is returned as Kafka's.
func TestObserverSnapshotErrorsMapped(t *testing.T) {
	var (
		mu    sync.Mutex
		code  int16
		asked []kmsg.FetchSnapshotRequestTopicPartition
	)
	addr := serveKafka(t, func(_ context.Context, req kmsg.Request) kmsg.Response {
		fs, ok := req.(*kmsg.FetchSnapshotRequest)
		if !ok || len(fs.Topics) != 1 || len(fs.Topics[0].Partitions) != 1 {
			t.Errorf("unexpected request %T", req)
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		p := fs.Topics[0].Partitions[0]
		asked = append(asked, p)
		resp := kmsg.NewPtrFetchSnapshotResponse()
		rt := kmsg.NewFetchSnapshotResponseTopic()
		rt.Topic = fs.Topics[0].Topic
		rp := kmsg.NewFetchSnapshotResponseTopicPartition()
		rp.ErrorCode, rp.SnapshotID.EndOffset, rp.SnapshotID.Epoch = code, p.SnapshotID.EndOffset, p.SnapshotID.Epoch
		rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = 2, 7
		rt.Partitions = append(rt.Partitions, rp)
		resp.Topics = append(resp.Topics, rt)
		return resp
	})
	o := newTestObserver(t, addr, &appliedLog{})
	stale := SnapshotID{EndOffset: 41, Epoch: 3}
	load := func(c int16) error {
		mu.Lock()
		code = c
		mu.Unlock()
		return o.loadSnapshot(t.Context(), addr, 0, stale)
	}

	if err := load(kerr.SnapshotNotFound.Code); !errors.Is(err, errSnapshotChanged) {
		t.Fatalf("pulling a replaced snapshot: %v, want errSnapshotChanged", err)
	}
	mu.Lock()
	if len(asked) != 1 || asked[0].SnapshotID.EndOffset != stale.EndOffset || asked[0].SnapshotID.Epoch != stale.Epoch || asked[0].Position != 0 {
		t.Fatalf("asked %+v, want snapshot %+v from position 0", asked, stale)
	}
	mu.Unlock()

	err := load(kerr.NotLeaderForPartition.Code)
	if err == nil || errors.Is(err, errSnapshotChanged) {
		t.Fatalf("pulling from a controller that is not the leader: %v", err)
	}
	if st := o.Status(); st.Leader != 2 || st.Epoch != 7 {
		t.Fatalf("after NOT_LEADER_OR_FOLLOWER naming 2 at epoch 7 the observer's leader is %d at %d", st.Leader, st.Epoch)
	}

	if err := load(kerr.PositionOutOfRange.Code); !errors.Is(err, kerr.PositionOutOfRange) || errors.Is(err, errSnapshotChanged) {
		t.Fatalf("POSITION_OUT_OF_RANGE: %v", err)
	}
}

// startLogVoter starts a single voter over the metadata log in dir and
// waits until it leads with its own term's first entry committed.
func startLogVoter(t *testing.T, dir string, applied *appliedLog) (*Driver, *LogEntryStore) {
	t.Helper()
	store, err := OpenLogEntryStore(vfs.Default, dir, clock.Real{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(Options{NodeID: 0, Voters: []int32{0}, TickInterval: 10 * time.Millisecond, FS: vfs.Default, Dir: dir, Store: store, Apply: applied.apply})
	if err != nil {
		_ = store.Close()
		t.Fatal(err)
	}
	d.Start()
	testutil.Eventually(t, 5*time.Second, func() bool {
		st := d.Status()
		return st.IsLeader && st.CommitOffset >= 0 && st.CommitOffset == store.log.LogEndOffset()-1
	}, "single voter leads and commits its term's first entry")
	return d, store
}

// TestObserverAdvancesPastEmptyEntries: a new leader's first entry of its
// term has no data. The observer applies only entries with data, but must
// move its fetch position past the empty ones, including one at the end of
// the log, rather than fetch it again and again.
func TestObserverAdvancesPastEmptyEntries(t *testing.T) {
	dir := t.TempDir()
	d, store := startLogVoter(t, dir, &appliedLog{})
	var want []string
	for i := range 3 {
		data := fmt.Sprintf("entry-%d", i)
		if _, err := d.Propose(t.Context(), []byte(data)); err != nil {
			t.Fatal(err)
		}
		want = append(want, data)
	}
	stop(t, d)
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	// The restarted voter's new term opens with an empty entry: the log is
	// empty(1), 3 entries of data, empty(2).
	d, store = startLogVoter(t, dir, &appliedLog{})
	t.Cleanup(func() {
		stop(t, d)
		if err := store.Close(); err != nil {
			t.Error(err)
		}
	})
	st := d.Status()
	last := st.CommitOffset
	if first, end := entryAt(t, store, 0), entryAt(t, store, last); last != 4 || !isEmpty(first) || !isEmpty(end) || int64(end.GetTerm()) != st.Epoch {
		t.Fatalf("log ends at %d (%v, epoch %d); want 5 entries, the first empty and the last the empty one of the epoch", last, end, st.Epoch)
	}

	logs := NewLogServer(d, store, nil, "observer-test", slog.New(slog.DiscardHandler))
	var (
		mu      sync.Mutex
		offsets []int64
	)
	addr := serveKafka(t, func(ctx context.Context, req kmsg.Request) kmsg.Response {
		f, ok := req.(*kmsg.FetchRequest)
		if !ok {
			t.Errorf("unexpected request %T", req)
			return nil
		}
		mu.Lock()
		offsets = append(offsets, f.Topics[0].Partitions[0].FetchOffset)
		mu.Unlock()
		resp, err := logs.FetchMetadataLog(ctx, f)
		if err != nil {
			t.Errorf("fetch: %v", err)
			return nil
		}
		return resp
	})
	applied := &appliedLog{}
	o := newTestObserver(t, addr, applied)
	o.Start()
	t.Cleanup(o.Stop)

	testutil.EventuallyNoError(t, 10*time.Second, func() error {
		if st := o.Status(); st.AppliedOffset != last {
			return fmt.Errorf("observer status %+v, error %v", st, o.Err())
		}
		return nil
	}, "observer applies through the empty entry at %d", last)
	if got := applied.data(); !slices.Equal(got, want) {
		t.Fatalf("observer applied %q, want %q (empty entries are not applied)", got, want)
	}
	// Its next fetches are past the log's end, not on the empty entry: a
	// caught-up fetch waits on the server, one that stayed would be
	// answered at once, again and again.
	fetchesPast := func() (past int, stuck []int64) {
		mu.Lock()
		defer mu.Unlock()
		for _, off := range offsets[1:] {
			if off == last+1 {
				past++
			} else {
				stuck = append(stuck, off)
			}
		}
		return past, stuck
	}
	testutil.Eventually(t, 10*time.Second, func() bool { past, _ := fetchesPast(); return past >= 2 },
		"observer fetches from %d", last+1)
	if _, stuck := fetchesPast(); len(stuck) > 0 {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("observer fetched at %v after its first fetch; want only %d (all fetches %v)", stuck, last+1, offsets)
	}
}

// isEmpty reports whether e is a normal entry without data.
func isEmpty(e *raftpb.Entry) bool {
	return e != nil && e.GetType() == raftpb.EntryNormal && len(e.GetData()) == 0
}

// entryAt reads the stored entry at offset (nil when absent).
func entryAt(t *testing.T, store *LogEntryStore, offset int64) *raftpb.Entry {
	t.Helper()
	b, err := store.ReadBatches(offset, 1, offset+1)
	if err != nil {
		t.Fatal(err)
	}
	var e *raftpb.Entry
	_, err = records.Batches(b, func(h records.Header, batch []byte) error {
		if h.BaseOffset != offset {
			return nil
		}
		var err error
		e, err = batchToEntry(h, batch)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}
