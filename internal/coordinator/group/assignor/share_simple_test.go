package assignor

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/sluice-io/sluice/internal/kafka"
)

var (
	shareT1 = kafka.UUID{1}
	shareT2 = kafka.UUID{2}
)

func shareMembers(n int, subs ...kafka.UUID) []ShareMember {
	out := make([]ShareMember, n)
	for i := range out {
		out[i] = ShareMember{ID: fmt.Sprintf("m%02d", i), Subscribed: subs}
	}
	return out
}

func partitions(n int32) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(i)
	}
	return out
}

// TestAssignShareCases pins the outcomes the rules decide completely.
func TestAssignShareCases(t *testing.T) {
	cases := []struct {
		name string
		spec ShareSpec
		want map[string]Assignment
	}{
		{"five members two partitions", ShareSpec{Members: shareMembers(5, shareT1), Assignable: map[kafka.UUID][]int32{shareT1: partitions(2)}},
			// Each partition shared by ceil(5/2) = 3 members at most; six
			// slots, the first member takes two.
			map[string]Assignment{
				"m00": {shareT1: {0, 1}}, "m01": {shareT1: {0}}, "m02": {shareT1: {0}}, "m03": {shareT1: {1}}, "m04": {shareT1: {1}},
			}},
		{"fewer members", ShareSpec{Members: shareMembers(2, shareT1), Assignable: map[kafka.UUID][]int32{shareT1: partitions(4)}},
			map[string]Assignment{"m00": {shareT1: {0, 2}}, "m01": {shareT1: {1, 3}}}},
		{"nothing initialized", ShareSpec{Members: shareMembers(2, shareT1), Assignable: map[kafka.UUID][]int32{}},
			map[string]Assignment{"m00": {}, "m01": {}}},
		{"heterogeneous", ShareSpec{
			Members:    []ShareMember{{ID: "a", Subscribed: []kafka.UUID{shareT1}}, {ID: "b", Subscribed: []kafka.UUID{shareT1, shareT2}}},
			Assignable: map[kafka.UUID][]int32{shareT1: partitions(1), shareT2: partitions(2)}},
			map[string]Assignment{"a": {shareT1: {0}}, "b": {shareT1: {0}, shareT2: {0, 1}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := AssignShare(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got  %v\nwant %v", got, c.want)
			}
		})
	}
}

// TestAssignShareProperties checks the rules on random homogeneous groups:
// every partition assigned, sharing bounded by ceil(m/p), member counts
// within one of each other, and stickiness when nothing changes.
func TestAssignShareProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		m, p := 1+r.IntN(12), int32(1+r.IntN(12))
		spec := ShareSpec{Members: shareMembers(m, shareT1, shareT2), Assignable: map[kafka.UUID][]int32{shareT1: partitions(p), shareT2: partitions(1 + p/2)}}
		got, err := AssignShare(spec)
		if err != nil {
			t.Fatal(err)
		}
		checkShareRules(t, spec, got)
		for i := range spec.Members {
			spec.Members[i].Current = got[spec.Members[i].ID]
		}
		again, _ := AssignShare(spec)
		if !reflect.DeepEqual(again, got) {
			t.Fatalf("m=%d p=%d: not sticky:\n%v\n%v", m, p, got, again)
		}
		// One member leaves: the others keep what they can.
		spec.Members = spec.Members[1:]
		if len(spec.Members) > 0 {
			after, _ := AssignShare(spec)
			checkShareRules(t, spec, after)
		}
	}
}

func checkShareRules(t *testing.T, spec ShareSpec, got map[string]Assignment) {
	t.Helper()
	holders := map[topicPartition]int{}
	minN, maxN := 1<<30, 0
	for _, m := range spec.Members {
		n := 0
		for topic, parts := range got[m.ID] {
			for _, p := range parts {
				holders[topicPartition{topic, p}]++
				n++
			}
		}
		minN, maxN = min(minN, n), max(maxN, n)
	}
	total := 0
	for _, parts := range spec.Assignable {
		total += len(parts)
	}
	sharing := (len(spec.Members) + total - 1) / total
	for topic, parts := range spec.Assignable {
		for _, p := range parts {
			h := holders[topicPartition{topic, p}]
			if h < 1 || h > sharing {
				t.Fatalf("partition %v/%d held by %d members, want 1..%d: %v", topic[0], p, h, sharing, got)
			}
		}
	}
	if maxN-minN > 1 {
		t.Fatalf("unbalanced: %d..%d partitions per member: %v", minN, maxN, got)
	}
}
