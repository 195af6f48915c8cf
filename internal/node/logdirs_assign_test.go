package node

import (
	"testing"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// TestPlanDirAssignments: only this broker's replicas whose recorded dir is
// not where their log is are planned, grouped by the actual dir; nothing
// while directory assignment is off.
func TestPlanDirAssignments(t *testing.T) {
	a, b := kafka.UUID{0xd1, 15: 1}, kafka.UUID{0xd1, 15: 2}
	build := func(on bool) *metadata.Image {
		d := metadata.NewDelta(metadata.EmptyImage())
		recs := []metadata.Record{&metadata.FeatureLevelRecord{Name: metadata.MetadataVersionFeature, Level: 33}}
		if on {
			recs = append(recs, &metadata.FeatureLevelRecord{Name: metadata.DirectoryAssignmentFeature, Level: 1})
		}
		recs = append(recs,
			&metadata.TopicRecord{Name: "t", TopicID: kafka.UUID{15: 1}},
			&metadata.PartitionRecord{TopicID: kafka.UUID{15: 1}, Partition: 0, Replicas: []int32{1, 2}, ISR: []int32{1, 2}, Leader: 1, Directories: []kafka.UUID{a, metadata.DirUnassigned}},
			&metadata.PartitionRecord{TopicID: kafka.UUID{15: 1}, Partition: 1, Replicas: []int32{1, 2}, ISR: []int32{1, 2}, Leader: 1},
			&metadata.PartitionRecord{TopicID: kafka.UUID{15: 1}, Partition: 2, Replicas: []int32{2, 3}, ISR: []int32{2, 3}, Leader: 2})
		for i, r := range recs {
			if err := d.Replay(int64(i), 1, r); err != nil {
				t.Fatal(err)
			}
		}
		return d.Apply()
	}
	where := func(tp kafka.TopicPartition) (kafka.UUID, bool) {
		switch tp.Partition {
		case 0:
			return a, true // as recorded
		case 1:
			return b, true // unassigned in the metadata
		}
		return b, true // not a replica of broker 1
	}
	got := planDirAssignments(build(true), 1, where)
	if len(got) != 1 || len(got[b]) != 1 || got[b][0].partition != 1 {
		t.Fatalf("plan %+v, want t-1 in dir b only", got)
	}
	if got := planDirAssignments(build(false), 1, where); len(got) != 0 {
		t.Fatalf("plan with assignment off: %+v", got)
	}
}

func TestFormatFeature(t *testing.T) {
	r, err := FormatFeature("sluice.directory.assignment.version=1")
	if f, ok := r.(*metadata.FeatureLevelRecord); err != nil || !ok || f.Level != 1 || f.Name != metadata.DirectoryAssignmentFeature {
		t.Fatalf("got %+v, %v", r, err)
	}
	for _, bad := range []string{"sluice.directory.assignment.version=2", "metadata.version=33", "x", "sluice.directory.assignment.version=-1"} {
		if _, err := FormatFeature(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
