package metadata

import (
	"encoding/binary"
	"reflect"
	"slices"
	"testing"

	"github.com/sluice-io/sluice/internal/kafka"
)

// TestReassignmentFieldsRoundTrip checks that the version 1 fields of the
// partition records survive encoding, with nil (no change) and empty (clear)
// kept apart.
func TestReassignmentFieldsRoundTrip(t *testing.T) {
	id := kafka.UUID{7}
	for _, r := range []Record{
		&PartitionRecord{TopicID: id, Partition: 1, Replicas: []int32{4, 2, 1}, ISR: []int32{1, 2}, Leader: 1,
			RemovingReplicas: []int32{1}, AddingReplicas: []int32{4}},
		&PartitionChangeRecord{TopicID: id, Partition: 1, Leader: NoLeaderChange, Replicas: []int32{4, 2, 1},
			RemovingReplicas: []int32{1}, AddingReplicas: []int32{4}},
		&PartitionChangeRecord{TopicID: id, Partition: 1, Leader: 2, RemovingReplicas: []int32{}, AddingReplicas: []int32{}},
	} {
		b := EncodeRecord(r)
		if v := int16(binary.BigEndian.Uint16(b[2:])); v != 1 {
			t.Fatalf("%T written at version %d, want 1", r, v)
		}
		got, err := DecodeRecord(b)
		if err != nil {
			t.Fatalf("%T: %v", r, err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Fatalf("%T: got %+v, want %+v", r, got, r)
		}
	}
}

// TestPartitionRecordsWithoutReassignmentAreVersion0: records that carry
// no reassignment are written at version 0, as before the fields existed,
// and decode back the same.
func TestPartitionRecordsWithoutReassignmentAreVersion0(t *testing.T) {
	id := kafka.UUID{7}
	for _, r := range []Record{
		&PartitionRecord{TopicID: id, Partition: 0, Replicas: []int32{1, 2}, ISR: []int32{1}, Leader: 1, LeaderEpoch: 3, PartitionEpoch: 4},
		&PartitionChangeRecord{TopicID: id, Partition: 0, Leader: 2, ISR: []int32{2}},
	} {
		b := EncodeRecord(r)
		if v := int16(binary.BigEndian.Uint16(b[2:])); v != 0 {
			t.Fatalf("%T written at version %d, want 0", r, v)
		}
		got, err := DecodeRecord(b)
		if err != nil {
			t.Fatalf("%T v0: %v", r, err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Fatalf("%T v0: got %+v, want %+v", r, got, r)
		}
		// Version 1 with the two fields null reads the same.
		v1 := append(slices.Clone(b), 0, 0)
		binary.BigEndian.PutUint16(v1[2:], 1)
		if got, err := DecodeRecord(v1); err != nil || !reflect.DeepEqual(got, r) {
			t.Fatalf("%T v1 with null fields: %+v, %v", r, got, err)
		}
	}
}

// TestReplayReassignment follows a reassignment through replay, the image
// and a snapshot: started by a change, carried by a snapshot, cleared by the
// completing change.
func TestReplayReassignment(t *testing.T) {
	id := kafka.UUID{9}
	d := NewDelta(EmptyImage())
	mustReplay := func(off int64, r Record) {
		t.Helper()
		if err := d.Replay(off, 1, r); err != nil {
			t.Fatal(err)
		}
	}
	mustReplay(0, &TopicRecord{Name: "t", TopicID: id})
	mustReplay(1, &PartitionRecord{TopicID: id, Partition: 0, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}, Leader: 1})
	mustReplay(2, &PartitionChangeRecord{TopicID: id, Partition: 0, Leader: NoLeaderChange,
		Replicas: []int32{2, 3, 4, 1}, RemovingReplicas: []int32{1}, AddingReplicas: []int32{4}})
	im := d.Apply()
	tp := kafka.TopicPartition{Topic: "t", Partition: 0}
	st, _ := im.Partition(tp)
	if !st.Reassigning() || !slices.Equal(st.AddingReplicas, []int32{4}) || !slices.Equal(st.RemovingReplicas, []int32{1}) ||
		!slices.Equal(st.Replicas, []int32{2, 3, 4, 1}) || st.PartitionEpoch != 1 || st.LeaderEpoch != 0 {
		t.Fatalf("after start: %+v", st)
	}

	restored, err := DecodeSnapshot(im.Offset(), im.Epoch(), EncodeSnapshot(im))
	if err != nil {
		t.Fatal(err)
	}
	if restored.String() != im.String() {
		t.Fatalf("snapshot lost the reassignment:\n%s\nwant\n%s", restored, im)
	}

	d = NewDelta(restored)
	if err := d.Replay(3, 1, &PartitionChangeRecord{TopicID: id, Partition: 0, Leader: 2, ISR: []int32{2, 3, 4},
		Replicas: []int32{2, 3, 4}, RemovingReplicas: []int32{}, AddingReplicas: []int32{}}); err != nil {
		t.Fatal(err)
	}
	st, _ = d.Apply().Partition(tp)
	if st.Reassigning() || st.AddingReplicas != nil || st.RemovingReplicas != nil || st.Leader != 2 || st.LeaderEpoch != 1 {
		t.Fatalf("after completion: %+v", st)
	}
}
