package balance

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// apply returns parts with plan's reassignments made.
func apply(parts []Partition, plan Plan) []Partition {
	out := slices.Clone(parts)
	at := map[string]int{}
	for i, p := range out {
		at[fmt.Sprintf("%s/%d", p.Topic, p.Partition)] = i
	}
	for _, r := range plan.Reassignments {
		i := at[fmt.Sprintf("%s/%d", r.Topic, r.Partition)]
		out[i].Replicas = slices.Clone(r.Replicas)
	}
	return out
}

type load struct {
	replicas, leaders int
	bytes             int64
}

// loads counts replicas, preferred leaders and bytes per broker id.
func loads(parts []Partition) map[int32]*load {
	m := map[int32]*load{}
	for _, p := range parts {
		for j, id := range p.Replicas {
			l := m[id]
			if l == nil {
				l = &load{}
				m[id] = l
			}
			l.replicas++
			l.bytes += p.Size
			if j == 0 {
				l.leaders++
			}
		}
	}
	return m
}

// checkPlan verifies what every plan must keep: the replication factor,
// no broker twice, new replicas only on alive brokers, the rack rule on
// every changed partition when there are racks enough.
func checkPlan(t testing.TB, brokers []Broker, parts []Partition, plan Plan) {
	t.Helper()
	state := map[int32]Broker{}
	racks := map[string]bool{}
	for _, b := range brokers {
		state[b.ID] = b
		if b.State == Alive {
			racks[rackKey(b)] = true
		}
	}
	byName := map[string]Partition{}
	for _, p := range parts {
		byName[fmt.Sprintf("%s/%d", p.Topic, p.Partition)] = p
	}
	for _, r := range plan.Reassignments {
		old := byName[fmt.Sprintf("%s/%d", r.Topic, r.Partition)]
		if old.Pinned {
			t.Fatalf("%s/%d is pinned but was reassigned", r.Topic, r.Partition)
		}
		if len(r.Replicas) != len(old.Replicas) {
			t.Fatalf("%s/%d: replication factor %d became %d", r.Topic, r.Partition, len(old.Replicas), len(r.Replicas))
		}
		seen := map[int32]bool{}
		perRack := map[string]int{}
		for _, id := range r.Replicas {
			if seen[id] {
				t.Fatalf("%s/%d: broker %d twice in %v", r.Topic, r.Partition, id, r.Replicas)
			}
			seen[id] = true
			if !slices.Contains(old.Replicas, id) && state[id].State != Alive {
				t.Fatalf("%s/%d: new replica on broker %d, which is not alive", r.Topic, r.Partition, id)
			}
			perRack[rackKey(state[id])]++
		}
		limit := (len(r.Replicas) + len(racks) - 1) / max(len(racks), 1)
		for rack, n := range perRack {
			if n > limit && rack != "?" {
				t.Fatalf("%s/%d: %d replicas in rack %s (limit %d): %v", r.Topic, r.Partition, n, rack, limit, r.Replicas)
			}
		}
	}
}

// rackKey names a broker's rack; a broker without one is its own rack.
func rackKey(b Broker) string {
	if b.Rack == "" {
		return fmt.Sprintf("#%d", b.ID)
	}
	return b.Rack
}

// genPartitions places count partitions of topic round-robin over on.
func genPartitions(topic string, count, rf int, on []int32, size func(i int) int64) []Partition {
	out := make([]Partition, count)
	for i := range out {
		reps := make([]int32, rf)
		for r := range reps {
			reps[r] = on[(i+r)%len(on)]
		}
		out[i] = Partition{Topic: topic, Partition: int32(i), Replicas: reps, Size: size(i)}
	}
	return out
}

// randomCluster draws a cluster for the property tests.
func randomCluster(rng *rand.Rand) ([]Broker, []Partition) {
	n := 3 + rng.IntN(10)
	numRacks := rng.IntN(4)
	var brokers []Broker
	var ids []int32
	for i := range n {
		b := Broker{ID: int32(i + 1)}
		if numRacks > 0 {
			b.Rack = string(rune('a' + rng.IntN(numRacks)))
		}
		if i >= 3 {
			switch rng.IntN(6) {
			case 0:
				b.State = Fenced
			case 1:
				b.State = Decommissioning
			}
		}
		brokers = append(brokers, b)
		if rng.IntN(3) > 0 || i < 3 {
			ids = append(ids, b.ID) // the others join empty
		}
	}
	rf := 1 + rng.IntN(min(3, len(ids)))
	parts := genPartitions("t", 1+rng.IntN(300), rf, ids, func(int) int64 {
		if rng.IntN(10) == 0 {
			return rng.Int64N(1 << 30)
		}
		return rng.Int64N(1 << 20)
	})
	for i := range parts {
		parts[i].Pinned = rng.IntN(50) == 0
	}
	return brokers, parts
}

func describeLoads(brokers []Broker, parts []Partition) string {
	var b strings.Builder
	l := loads(parts)
	ids := []int32{}
	for _, br := range brokers {
		ids = append(ids, br.ID)
	}
	for id := range l {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		x := l[id]
		if x == nil {
			x = &load{}
		}
		fmt.Fprintf(&b, "broker %d: replicas=%d leaders=%d bytes=%d\n", id, x.replicas, x.leaders, x.bytes)
	}
	return b.String()
}
