package quorum

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/testutil"
	"github.com/sluice-io/sluice/internal/vfs"
)

// voterView is a View over a Voter stepped by the test.
type voterView struct{ v *Voter }

func (w voterView) Status() Status               { return w.v.Status() }
func (voterView) StatusChanged() <-chan struct{} { return nil }
func (voterView) Done() <-chan struct{}          { return nil }
func (voterView) Err() error                     { return nil }

// TestRaftMetrics walks a voter of three through an election and a commit
// under a manual clock: the state, vote, epoch, offsets and both latencies
// read as Kafka's raft-metrics would.
func TestRaftMetrics(t *testing.T) {
	fsys := vfs.NewMem()
	mkdirDurable(t, fsys, "/q")
	clk := clock.NewManual(time.Unix(1000, 0))
	v, err := NewVoter(Options{NodeID: 0, Voters: []int32{0, 1, 2}, FS: fsys, Dir: "/q", Store: NewMemoryEntryStore(), Transport: &capture{},
		Clock: clk, Apply: func(Committed) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewMetricsCollector(voterView{v}, v.latencies, clk))
	process := func() {
		t.Helper()
		if err := v.Process(); err != nil {
			t.Fatal(err)
		}
	}
	step := func(typ raftpb.MessageType, term, index uint64) {
		t.Helper()
		m := &raftpb.Message{Type: typ.Enum(), From: proto.Uint64(RaftID(1)), To: proto.Uint64(RaftID(0)), Term: proto.Uint64(term), Index: proto.Uint64(index)}
		if err := v.Step(m); err != nil {
			t.Fatal(err)
		}
		process()
	}
	got := scrapeRaft(t, reg)
	if got["current_state"] != 1 || got["state"] != stateCode(StateUnattached) || got["current_leader"] != -1 || got["current_vote"] != -1 ||
		!math.IsNaN(got["election_latency_avg"]) || !math.IsNaN(got["commit_latency_max"]) || got["number_unknown_voter_connections"] != 0 {
		t.Fatalf("before any election: %v", got)
	}
	if err := v.Campaign(); err != nil {
		t.Fatal(err)
	}
	process()
	clk.Advance(40 * time.Millisecond)
	step(raftpb.MsgPreVoteResp, 1, 0)
	got = scrapeRaft(t, reg)
	if got["state"] != stateCode(StateCandidate) || got["current_vote"] != 0 || got["current_epoch"] != 1 {
		t.Fatalf("candidate: %v", got)
	}
	clk.Advance(10 * time.Millisecond)
	step(raftpb.MsgVoteResp, 1, 0)
	// The new leader's empty entry commits once a follower has it.
	step(raftpb.MsgAppResp, 1, 1)
	v.Propose([]byte("a"), func(int64, error) {})
	process()
	clk.Advance(25 * time.Millisecond)
	step(raftpb.MsgAppResp, 1, 2)
	got = scrapeRaft(t, reg)
	want := map[string]float64{
		"state": stateCode(StateLeader), "current_leader": 0, "current_vote": 0, "current_epoch": 1,
		"high_watermark": 2, "log_end_offset": 2, "log_end_epoch": 1,
		"election_latency_avg": 50, "election_latency_max": 50, "commit_latency_avg": 25, "commit_latency_max": 25,
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %v, want %v", k, got[k], w)
		}
	}
	// The latencies leave the window after 60 s.
	clk.Advance(time.Minute)
	if got := scrapeRaft(t, reg); !math.IsNaN(got["commit_latency_avg"]) || !math.IsNaN(got["election_latency_max"]) {
		t.Fatalf("after the window: %v", got)
	}
}

var raftStates = []string{StateLeader, StateCandidate, StateVoted, StateFollower, StateUnattached, StateObserver}

func stateCode(s string) float64 {
	for i, n := range raftStates {
		if n == s {
			return float64(i)
		}
	}
	return -1
}

// scrapeRaft gathers reg: each raft-metrics gauge by its short name, and
// "state" the index in raftStates of the one current_state series.
func scrapeRaft(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		name := mf.GetName()[len("kafka_server_raftmetrics_"):]
		for _, m := range mf.GetMetric() {
			out[name] += m.GetGauge().GetValue()
			if name == "current_state" {
				out["state"] = stateCode(m.GetLabel()[0].GetValue())
			}
		}
	}
	return out
}

// TestObserverRaftMetrics: an observer reports state unattached until it
// knows the leader, then observer, no vote, and the voter's log end and
// high watermark once caught up.
func TestObserverRaftMetrics(t *testing.T) {
	d, store := startLogVoter(t, t.TempDir(), &appliedLog{})
	t.Cleanup(func() {
		stop(t, d)
		if err := store.Close(); err != nil {
			t.Error(err)
		}
	})
	for range 3 {
		if _, err := d.Propose(t.Context(), []byte("e")); err != nil {
			t.Fatal(err)
		}
	}
	logs := NewLogServer(d, store, nil, "observer-test", slog.New(slog.DiscardHandler))
	addr := serveKafka(t, func(ctx context.Context, req kmsg.Request) kmsg.Response {
		resp, err := logs.FetchMetadataLog(ctx, req.(*kmsg.FetchRequest))
		if err != nil {
			t.Errorf("fetch: %v", err)
			return nil
		}
		return resp
	})
	o := newTestObserver(t, addr, &appliedLog{})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewMetricsCollector(o, nil, clock.Real{}))
	// Before its first fetch it knows no leader: unattached, as Kafka's.
	if got := scrapeRaft(t, reg); got["state"] != stateCode(StateUnattached) || got["current_leader"] != -1 || got["log_end_offset"] != 0 {
		t.Fatalf("observer before fetching: %v", got)
	}
	o.Start()
	t.Cleanup(o.Stop)
	testutil.EventuallyNoError(t, 10*time.Second, func() error {
		// The voter's status is read each time: its commit offset can move
		// after Propose returns (seen: the observer at 4, a stale 3 wanted).
		vs := d.Status()
		got := scrapeRaft(t, reg)
		want := map[string]float64{"state": stateCode(StateObserver), "current_vote": -1, "current_leader": float64(vs.Leader),
			"current_epoch": float64(vs.Epoch), "high_watermark": float64(vs.CommitOffset + 1),
			"log_end_offset": float64(vs.LogEndOffset), "log_end_epoch": float64(vs.LogEndEpoch)}
		for k, w := range want {
			if got[k] != w {
				return fmt.Errorf("%s = %v, want %v (all %v)", k, got[k], w, got)
			}
		}
		if !math.IsNaN(got["commit_latency_avg"]) {
			return fmt.Errorf("observer commit latency %v, want NaN", got["commit_latency_avg"])
		}
		return nil
	}, "observer's raft metrics match the voter's log")
}
