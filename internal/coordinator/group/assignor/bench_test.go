package assignor

import (
	"fmt"
	"slices"
	"testing"

	"github.com/sluice-io/sluice/internal/kafka"
)

// benchSpec is members subscribed to topics of parts partitions each: all
// of them, or (mixed) each member to a window of a third of the topics.
func benchSpec(members, topics int, parts int32, mixed bool) Spec {
	spec := Spec{Topics: make(map[kafka.UUID]Topic, topics)}
	ids := make([]kafka.UUID, topics)
	for i := range ids {
		ids[i] = kafka.UUID{0: byte(i >> 8), 1: byte(i), 15: 1}
		spec.Topics[ids[i]] = Topic{ID: ids[i], Name: fmt.Sprintf("topic-%d", i), Partitions: parts}
	}
	for i := range members {
		m := Member{ID: fmt.Sprintf("member-%04d", i), Subscribed: ids}
		if mixed {
			var subs []kafka.UUID
			for j := range topics / 3 {
				subs = append(subs, ids[(i+j)%topics])
			}
			slices.SortFunc(subs, compareUUID)
			m.Subscribed = subs
		}
		spec.Members = append(spec.Members, m)
	}
	return spec
}

// The benchmarks assign 1,000 members over 100 topics of 100 partitions:
// from scratch, recomputed unchanged (the common case: an epoch bump that
// moves nothing), and after one member left.
func BenchmarkUniformHomogeneous(b *testing.B) { benchAssign(b, Uniform(), false) }

func BenchmarkUniformHeterogeneous(b *testing.B) { benchAssign(b, Uniform(), true) }

func BenchmarkRange(b *testing.B) { benchAssign(b, Range(), false) }

func benchAssign(b *testing.B, a Assignor, mixed bool) {
	spec := benchSpec(1000, 100, 100, mixed)
	first, err := a.Assign(spec)
	if err != nil {
		b.Fatal(err)
	}
	steady := withCurrent(spec, first)
	leave := withCurrent(spec, first)
	leave.Members = slices.Delete(leave.Members, 500, 501)
	for _, c := range []struct {
		name string
		spec Spec
	}{{"fresh", spec}, {"steady", steady}, {"leave", leave}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Assign(c.spec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
