package group

import (
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestShareOffsetsLag checks Kafka 4.4's lag rule
// (GroupCoordinatorService.computeShareGroupLagAndBuildResponse): lag is
// end - start - delivery complete count, computed only for a summary
// without error whose start offset and delivery complete count are known;
// otherwise -1, with the start offset -1 and leader epoch 0 when the
// summary failed.
func TestShareOffsetsLag(t *testing.T) {
	ok := ShareStateSummary{StartOffset: 10, LeaderEpoch: 3, DeliveryCompleteCount: 4}
	for _, c := range []struct {
		name string
		s    ShareStateSummary
		want bool
	}{
		{"known", ok, true},
		{"no start offset", ShareStateSummary{StartOffset: -1, DeliveryCompleteCount: 0}, false},
		{"no delivery count", ShareStateSummary{StartOffset: 10, DeliveryCompleteCount: -1}, false},
		{"error", ShareStateSummary{ErrorCode: kerr.UnknownTopicOrPartition.Code, StartOffset: 10}, false},
	} {
		if got := c.s.LagKnown(); got != c.want {
			t.Errorf("%s: LagKnown = %v", c.name, got)
		}
	}
	if got := LagOffsets(1, ok, 20, nil); got != (PartitionOffsets{Partition: 1, StartOffset: 10, LeaderEpoch: 3, Lag: 6}) {
		t.Errorf("lag: %+v", got)
	}
	// A count of records past the start already done brings the lag to 0
	// when every in-flight record is acknowledged.
	if got := LagOffsets(0, ShareStateSummary{StartOffset: 5, DeliveryCompleteCount: 3}, 8, nil); got.Lag != 0 {
		t.Errorf("all done: %+v", got)
	}
	got := LagOffsets(2, ok, 0, fmt.Errorf("list offsets: %w", kerr.NotLeaderForPartition))
	if got.ErrorCode != kerr.NotLeaderForPartition.Code || got.ErrorMessage == nil || got.Lag != -1 || got.StartOffset != 0 {
		t.Errorf("end offset failure: %+v", got)
	}
	if got := LagOffsets(2, ok, 0, errors.New("boom")); got.ErrorCode != kerr.UnknownServerError.Code {
		t.Errorf("plain error: %+v", got)
	}
	if got := SummaryOffsets(3, ShareStateSummary{ErrorCode: kerr.UnknownTopicOrPartition.Code, StartOffset: 9, LeaderEpoch: 2}); got != (PartitionOffsets{Partition: 3, StartOffset: -1, Lag: -1}) {
		t.Errorf("failed summary: %+v", got)
	}
	if got := SummaryOffsets(3, ShareStateSummary{StartOffset: 9, LeaderEpoch: 2, DeliveryCompleteCount: -1}); got != (PartitionOffsets{Partition: 3, StartOffset: 9, LeaderEpoch: 2, Lag: -1}) {
		t.Errorf("unknown count: %+v", got)
	}
}
