package groupcoord

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/coordinator/runtime/runtimetest"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/testutil"
)

// TestMetricsCollector: group counts by state and protocol, the counters,
// and lag where the high watermark is known; counters survive the shards.
func TestMetricsCollector(t *testing.T) {
	c := startCoordinator(t, runtimetest.NewMemLog(), testGroupConfig())
	ctx := context.Background()
	waitLoaded(t, c.GroupCoordinator, "g")
	waitLoaded(t, c.GroupCoordinator, "tool")
	first := c.JoinGroup(ctx, joinReq("g", "", "c1"))
	joined := c.JoinGroup(ctx, joinReq("g", first.MemberID, "c1"))
	if joined.ErrorCode != 0 {
		t.Fatalf("join: %+v", joined)
	}
	if s := c.SyncGroup(ctx, group.SyncRequest{GroupID: "g", MemberID: first.MemberID, GenerationID: joined.GenerationID,
		Assignments: map[string][]byte{first.MemberID: []byte("a")}}); s.ErrorCode != 0 {
		t.Fatalf("sync: %+v", s)
	}
	t0, t1, u0 := kafka.TopicPartition{Topic: "t", Partition: 0}, kafka.TopicPartition{Topic: "t", Partition: 1}, kafka.TopicPartition{Topic: "u", Partition: 0}
	commit := func(groupID string, member string, gen int32, tp kafka.TopicPartition, off int64) {
		t.Helper()
		r := c.CommitOffsets(ctx, group.CommitRequest{GroupID: groupID, MemberID: member, GenerationID: gen,
			Partitions: []group.CommitPartition{{TP: tp, Offset: off, LeaderEpoch: -1}}})
		if r.Errors[0] != 0 {
			t.Fatalf("commit %s %s: %d", groupID, tp, r.Errors[0])
		}
	}
	commit("g", first.MemberID, joined.GenerationID, t0, 42)
	commit("g", first.MemberID, joined.GenerationID, t1, 90)
	commit("tool", "", -1, u0, 7)
	hws := map[kafka.TopicPartition]int64{t0: 100, t1: 80} // u-0 is not hosted here
	reg := prometheus.NewPedanticRegistry()
	var asked []kafka.TopicPartition
	reg.MustRegister(NewMetricsCollector(c.GroupCoordinator, func(_ context.Context, tps []kafka.TopicPartition) map[kafka.TopicPartition]int64 {
		asked = tps
		return hws
	}, 5*time.Second))
	got := scrape(t, reg)
	slices.SortFunc(asked, func(a, b kafka.TopicPartition) int { return strings.Compare(a.String(), b.String()) })
	if !slices.Equal(asked, []kafka.TopicPartition{t0, t1, u0}) {
		t.Errorf("asked for the high watermarks of %v, want each committed partition once", asked)
	}
	want := map[string]float64{
		`kafka_server_groupcoordinatormetrics_group_count{protocol="classic"}`:                 2,
		`kafka_server_groupcoordinatormetrics_group_count{protocol="consumer"}`:                0,
		`kafka_server_groupcoordinatormetrics_classic_group_count{state="Stable"}`:             1,
		`kafka_server_groupcoordinatormetrics_classic_group_count{state="Empty"}`:              1,
		`kafka_server_groupcoordinatormetrics_classic_group_count{state="PreparingRebalance"}`: 0,
		`kafka_server_groupcoordinatormetrics_consumer_group_count{state="Stable"}`:            0,
		`kafka_server_groupcoordinatormetrics_group_completed_rebalance_count`:                 1,
		`kafka_server_groupcoordinatormetrics_offset_commit_count`:                             3,
		`kafka_server_groupcoordinatormetrics_offset_deletion_count`:                           0,
		`kafka_coordinator_group_groupmetadatamanager_numgroups`:                               2,
		`kafka_coordinator_group_groupmetadatamanager_numoffsets`:                              3,
		`kafka_consumergroup_current_offset{consumergroup="g",partition="0",topic="t"}`:        42,
		`kafka_consumergroup_lag{consumergroup="g",partition="0",topic="t"}`:                   58,
		// Committed past the high watermark: floored at 0.
		`kafka_consumergroup_lag{consumergroup="g",partition="1",topic="t"}`:               0,
		`kafka_consumergroup_lag_sum{consumergroup="g",topic="t"}`:                         58,
		`kafka_consumergroup_current_offset{consumergroup="tool",partition="0",topic="u"}`: 7,
		`kafka_consumergroup_members{consumergroup="g"}`:                                   1,
		`kafka_consumergroup_members{consumergroup="tool"}`:                                0,
	}
	for k, w := range want {
		if v, ok := got[k]; !ok || v != w {
			t.Errorf("%s = %v (present %v), want %v", k, v, ok, w)
		}
	}
	for k := range got {
		if strings.Contains(k, `consumergroup="tool"`) && (strings.HasPrefix(k, "kafka_consumergroup_lag{") || strings.HasPrefix(k, "kafka_consumergroup_lag_sum")) {
			t.Errorf("%s reported for a partition whose high watermark is unknown", k)
		}
	}
	if code, codes := c.DeleteOffsets(ctx, "tool", []kafka.TopicPartition{u0}); code != 0 || codes[0] != 0 {
		t.Fatalf("delete offsets: %d %v", code, codes)
	}
	before := scrape(t, reg)
	if got := before[`kafka_server_groupcoordinatormetrics_offset_deletion_count`]; got != 1 {
		t.Fatalf("offset_deletion_count = %v, want 1", got)
	}
	// Stopped shards keep their counts.
	c.Close()
	after := scrape(t, reg)
	for _, k := range []string{"offset_commit_count", "group_completed_rebalance_count", "offset_deletion_count"} {
		k = "kafka_server_groupcoordinatormetrics_" + k
		if after[k] != before[k] {
			t.Errorf("%s after the shards stopped = %v, want %v", k, after[k], before[k])
		}
	}
	if after[`kafka_coordinator_group_groupmetadatamanager_numgroups`] != 0 {
		t.Errorf("numgroups after the shards stopped = %v", after[`kafka_coordinator_group_groupmetadatamanager_numgroups`])
	}
}

// scrape gathers reg into name{label="value",...} -> value, labels sorted
// by name as the registry sorts them.
func scrape(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	return testutil.Gather(t, reg)
}
