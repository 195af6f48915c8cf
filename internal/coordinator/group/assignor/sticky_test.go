package assignor

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// withCurrent returns spec's members with got as their current assignment.
func withCurrent(spec Spec, got map[string]Assignment) Spec {
	s := spec
	s.Members = slices.Clone(spec.Members)
	for i := range s.Members {
		s.Members[i].Current = got[s.Members[i].ID]
	}
	return s
}

// holds reports whether a holds every partition of sub.
func holds(a, sub Assignment) bool {
	for id, parts := range sub {
		for _, q := range parts {
			if _, ok := slices.BinarySearch(a[id], q); !ok {
				return false
			}
		}
	}
	return true
}

// stickySpec draws a spec without current assignments, homogeneous or not.
func stickySpec(r *rand.Rand, homogeneous bool) Spec {
	for {
		spec := randomSpec(r)
		if len(spec.Members) < 2 || isHomogeneous(spec) != homogeneous {
			continue
		}
		for i := range spec.Members {
			spec.Members[i].Current = nil
		}
		return spec
	}
}

// TestUniformSteadyState: recomputing with the result as current changes
// nothing, and every member gets its own map back.
func TestUniformSteadyState(t *testing.T) {
	r := propRand(t)
	for i := range *propSpecs {
		spec := stickySpec(r, i%2 == 0)
		first, err := Uniform().Assign(spec)
		if err != nil {
			t.Fatal(err)
		}
		next := withCurrent(spec, first)
		again, err := Uniform().Assign(next)
		if err != nil {
			t.Fatal(err)
		}
		if !equalResults(first, again) {
			t.Fatalf("spec %d: recomputed %v, was %v\nspec: %+v", i, again, first, spec)
		}
		for _, m := range next.Members {
			if len(m.Current) > 0 && reflect.ValueOf(again[m.ID]).UnsafePointer() != reflect.ValueOf(m.Current).UnsafePointer() {
				t.Fatalf("spec %d: member %s got a new map for an unchanged assignment", i, m.ID)
			}
		}
	}
}

// TestUniformHomogeneousLeave: when a member leaves a homogeneous group,
// only its partitions move; every other member keeps all it had.
func TestUniformHomogeneousLeave(t *testing.T) {
	r := propRand(t)
	for i := range *propSpecs {
		spec := stickySpec(r, true)
		first, err := Uniform().Assign(spec)
		if err != nil {
			t.Fatal(err)
		}
		next := withCurrent(spec, first)
		gone := r.IntN(len(next.Members))
		next.Members = slices.Delete(next.Members, gone, gone+1)
		got, err := Uniform().Assign(next)
		if err == nil {
			err = checkValid(next, got)
		}
		if err == nil {
			err = checkUniformBalance(next, got)
		}
		if err != nil {
			t.Fatalf("spec %d: %v", i, err)
		}
		for _, m := range next.Members {
			if !holds(got[m.ID], m.Current) {
				t.Fatalf("spec %d: %s lost partitions when %s left: had %v, got %v",
					i, m.ID, spec.Members[gone].ID, m.Current, got[m.ID])
			}
		}
	}
}

// TestUniformHomogeneousJoin: when a member joins a homogeneous group, the
// others only give partitions up, and only what their new quota exceeds.
func TestUniformHomogeneousJoin(t *testing.T) {
	r := propRand(t)
	for i := range *propSpecs {
		spec := stickySpec(r, true)
		first, err := Uniform().Assign(spec)
		if err != nil {
			t.Fatal(err)
		}
		next := withCurrent(spec, first)
		joiner := Member{ID: "new", Subscribed: next.Members[0].Subscribed}
		next.Members = append(next.Members, joiner)
		got, err := Uniform().Assign(next)
		if err == nil {
			err = checkValid(next, got)
		}
		if err == nil {
			err = checkUniformBalance(next, got)
		}
		if err != nil {
			t.Fatalf("spec %d: %v", i, err)
		}
		total := 0
		for _, m := range next.Members {
			total += size(m.Current)
		}
		quota := total / len(next.Members)
		for _, m := range next.Members[:len(next.Members)-1] {
			kept := size(m.Current) - lost(m.Current, got[m.ID])
			if !holds(m.Current, got[m.ID]) || kept < min(size(m.Current), quota) {
				t.Fatalf("spec %d: %s had %v, got %v (quota %d)", i, m.ID, m.Current, got[m.ID], quota)
			}
		}
	}
}

// lost counts the partitions of had missing from got.
func lost(had, got Assignment) int {
	n := 0
	for id, parts := range had {
		for _, q := range parts {
			if _, ok := slices.BinarySearch(got[id], q); !ok {
				n++
			}
		}
	}
	return n
}

// TestUniformSteadyStateAllocs: an unchanged group costs a fixed number of
// allocations whatever its size (the unchanged maps are handed back).
func TestUniformSteadyStateAllocs(t *testing.T) {
	for _, members := range []int{10, 1000} {
		spec := benchSpec(members, 100, 100, false)
		first, err := Uniform().Assign(spec)
		if err != nil {
			t.Fatal(err)
		}
		next := withCurrent(spec, first)
		allocs := testing.AllocsPerRun(5, func() {
			if _, err := Uniform().Assign(next); err != nil {
				t.Fatal(err)
			}
		})
		t.Logf("%d members: %.0f allocations", members, allocs)
		if allocs > 40 {
			t.Errorf("%d members: %.0f allocations for an unchanged group, want at most 40", members, allocs)
		}
	}
}
