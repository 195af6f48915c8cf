package assignor

import (
	"cmp"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/kafka"
)

var (
	propSeed  = flag.Uint64("assignor.seed", 0, "seed of the property tests (0: from the clock)")
	propSpecs = flag.Int("assignor.specs", 400, "random specs per property test")
)

// propRand returns the property tests' generator and logs its seed, so a
// failure can be replayed with -assignor.seed.
func propRand(t *testing.T) *rand.Rand {
	seed := *propSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -assignor.seed=%d)", seed, seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// randomSpec draws topics (random ids, so both halves' signs vary), members
// with homogeneous or mixed subscriptions, some of them static, and, half
// of the time, current assignments with the flaws a caller could pass:
// partitions claimed twice, beyond a topic's count, of topics not
// subscribed or unknown.
func randomSpec(r *rand.Rand) Spec {
	spec := Spec{Topics: map[kafka.UUID]Topic{}}
	var ids []kafka.UUID
	for i := range r.IntN(7) {
		var id kafka.UUID
		for j := range id {
			id[j] = byte(r.Uint32())
		}
		spec.Topics[id] = Topic{ID: id, Name: fmt.Sprintf("t%d", i), Partitions: int32(r.IntN(13))}
		ids = append(ids, id)
	}
	unknown := kafka.UUID{0: 0xee, 15: 0xee}
	subset := func() []kafka.UUID {
		var s []kafka.UUID
		for _, id := range ids {
			if r.IntN(2) == 0 {
				s = append(s, id)
			}
		}
		if r.IntN(8) == 0 {
			s = append(s, unknown)
		}
		slices.SortFunc(s, compareUUID)
		return s
	}
	homogeneous := r.IntN(2) == 0
	shared := subset()
	withCurrent := r.IntN(2) == 0
	for i := range r.IntN(11) {
		m := Member{ID: fmt.Sprintf("m%02d", i), Subscribed: shared}
		if r.IntN(3) == 0 {
			m.InstanceID = fmt.Sprintf("i%d", r.IntN(6))
		}
		if !homogeneous {
			m.Subscribed = subset()
		}
		if withCurrent {
			m.Current = randomCurrent(r, append(ids, unknown), spec.Topics)
		}
		spec.Members = append(spec.Members, m)
	}
	return spec
}

func randomCurrent(r *rand.Rand, ids []kafka.UUID, topics map[kafka.UUID]Topic) Assignment {
	a := Assignment{}
	for _, id := range ids {
		if r.IntN(3) != 0 {
			continue
		}
		n := topics[id].Partitions + 2
		var parts []int32
		for q := range n {
			if r.IntN(3) == 0 {
				parts = append(parts, q)
			}
		}
		if len(parts) > 0 {
			a[id] = parts
		}
	}
	return a
}

// checkValid checks what every assignor promises: an entry per member;
// sorted, non-empty partition lists of known topics the member subscribes
// to; every partition of a subscribed topic with exactly one member.
func checkValid(spec Spec, got map[string]Assignment) error {
	if len(got) != len(spec.Members) {
		return fmt.Errorf("%d entries for %d members", len(got), len(spec.Members))
	}
	owners := map[kafka.UUID][]int{}
	for _, m := range spec.Members {
		a, ok := got[m.ID]
		if !ok {
			return fmt.Errorf("no entry for member %s", m.ID)
		}
		for id, parts := range a {
			t, known := spec.Topics[id]
			switch {
			case !known:
				return fmt.Errorf("member %s: unknown topic %s", m.ID, id)
			case !slices.Contains(m.Subscribed, id):
				return fmt.Errorf("member %s: topic %s not subscribed", m.ID, t.Name)
			case len(parts) == 0:
				return fmt.Errorf("member %s: empty list for %s", m.ID, t.Name)
			}
			if owners[id] == nil {
				owners[id] = make([]int, t.Partitions)
			}
			for i, q := range parts {
				if q < 0 || q >= t.Partitions || (i > 0 && q <= parts[i-1]) {
					return fmt.Errorf("member %s: %s partitions %v not sorted in [0,%d)", m.ID, t.Name, parts, t.Partitions)
				}
				owners[id][q]++
			}
		}
	}
	for id, t := range spec.Topics {
		if !subscribed(spec, id) {
			continue
		}
		for q := range t.Partitions {
			if owners[id] == nil || owners[id][q] != 1 {
				return fmt.Errorf("%s-%d has %d owners", t.Name, q, count(owners[id], q))
			}
		}
	}
	return nil
}

func count(owners []int, q int32) int {
	if owners == nil {
		return 0
	}
	return owners[q]
}

func subscribed(spec Spec, id kafka.UUID) bool {
	for _, m := range spec.Members {
		if slices.Contains(m.Subscribed, id) {
			return true
		}
	}
	return false
}

func size(a Assignment) int {
	n := 0
	for _, parts := range a {
		n += len(parts)
	}
	return n
}

// knownSubs is the member's subscription as the assignors see it.
func knownSubs(spec Spec, m Member) []kafka.UUID {
	return slices.DeleteFunc(slices.Clone(m.Subscribed), func(id kafka.UUID) bool {
		_, ok := spec.Topics[id]
		return !ok
	})
}

func isHomogeneous(spec Spec) bool {
	for _, m := range spec.Members {
		if !slices.Equal(knownSubs(spec, m), knownSubs(spec, spec.Members[0])) {
			return false
		}
	}
	return true
}

// checkUniformBalance checks uniform's balance: with one subscription,
// counts differ by at most one; otherwise no partition can move to a
// subscriber of its topic holding two fewer (the state Kafka's
// heterogeneous balancing converges to).
func checkUniformBalance(spec Spec, got map[string]Assignment) error {
	if isHomogeneous(spec) {
		lo, hi := -1, -1
		for _, m := range spec.Members {
			n := size(got[m.ID])
			if lo < 0 || n < lo {
				lo = n
			}
			hi = max(hi, n)
		}
		if hi-lo > 1 {
			return fmt.Errorf("homogeneous sizes range over [%d,%d]", lo, hi)
		}
		return nil
	}
	for _, a := range spec.Members {
		for id := range got[a.ID] {
			for _, b := range spec.Members {
				if slices.Contains(b.Subscribed, id) && size(got[a.ID]) > size(got[b.ID])+1 {
					return fmt.Errorf("%s holds %s and %d partitions, subscriber %s only %d",
						a.ID, spec.Topics[id].Name, size(got[a.ID]), b.ID, size(got[b.ID]))
				}
			}
		}
	}
	return nil
}

// checkRange checks range's layout: each topic's subscribers in range order
// (static members by instance id, then the others by id) hold consecutive
// ranges from partition 0, longer ranges first, lengths within one.
func checkRange(spec Spec, got map[string]Assignment) error {
	order := slices.Clone(spec.Members)
	slices.SortStableFunc(order, func(x, y Member) int {
		if (x.InstanceID == "") != (y.InstanceID == "") {
			if x.InstanceID != "" {
				return -1
			}
			return 1
		}
		return cmp.Or(strings.Compare(x.InstanceID, y.InstanceID), strings.Compare(x.ID, y.ID))
	})
	for id, t := range spec.Topics {
		var subs []Member
		for _, m := range order {
			if slices.Contains(m.Subscribed, id) {
				subs = append(subs, m)
			}
		}
		next := int32(0)
		for i, m := range subs {
			want := t.Partitions / int32(len(subs))
			if int32(i) < t.Partitions%int32(len(subs)) {
				want++
			}
			parts := got[m.ID][id]
			if int32(len(parts)) != want || (want > 0 && (parts[0] != next || parts[len(parts)-1] != next+want-1)) {
				return fmt.Errorf("%s of %s: got %v, want %d from %d", t.Name, m.ID, parts, want, next)
			}
			next += want
		}
	}
	return nil
}

// shuffled returns spec with its members out of order: the assignors must
// not depend on the order they are handed.
func shuffled(r *rand.Rand, spec Spec) Spec {
	s := spec
	s.Members = slices.Clone(spec.Members)
	r.Shuffle(len(s.Members), func(i, j int) { s.Members[i], s.Members[j] = s.Members[j], s.Members[i] })
	return s
}

func equalResults(a, b map[string]Assignment) bool {
	return maps.EqualFunc(a, b, func(x, y Assignment) bool {
		return maps.EqualFunc(x, y, func(p, q []int32) bool { return slices.Equal(p, q) })
	})
}

func TestPropertiesUniform(t *testing.T) {
	testProperties(t, Uniform(), checkUniformBalance)
}

func TestPropertiesRange(t *testing.T) {
	testProperties(t, Range(), checkRange)
}

func testProperties(t *testing.T, a Assignor, check func(Spec, map[string]Assignment) error) {
	r := propRand(t)
	for i := range *propSpecs {
		spec := randomSpec(r)
		got, err := a.Assign(spec)
		if err == nil {
			err = checkValid(spec, got)
		}
		if err == nil {
			err = check(spec, got)
		}
		if err == nil {
			again, aerr := a.Assign(shuffled(r, spec))
			if err = aerr; err == nil && !equalResults(got, again) {
				err = fmt.Errorf("not deterministic: %v then %v", got, again)
			}
		}
		if err != nil {
			t.Fatalf("spec %d: %v\nspec: %+v", i, err, spec)
		}
	}
}
