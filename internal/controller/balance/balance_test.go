package balance

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestPlan runs the golden cases of testdata/plan: each "plan" case lists
// brokers and partitions ("broker ID [rack=R] [fenced|decommissioning]",
// "part TOPIC P R1,R2 [size=N] [pinned]", "gen TOPIC count=N rf=R
// on=1,2,3 [size=N]") and prints the reassignments, the totals and the
// loads after the plan; every plan is checked and must re-plan empty.
func TestPlan(t *testing.T) {
	datadriven.RunTest(t, "testdata/plan", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "plan" {
			t.Fatalf("unknown command %q", d.Cmd)
		}
		var opts Options
		for _, a := range d.CmdArgs {
			switch a.Key {
			case "tolerance":
				v, err := strconv.ParseFloat(a.Vals[0], 64)
				if err != nil {
					t.Fatal(err)
				}
				opts.Tolerance = v
			case "ignore-bytes":
				opts.IgnoreBytes = true
			case "drain-only":
				opts.DrainOnly = true
			}
		}
		brokers, parts := parseCase(t, d.Input)
		plan := Compute(brokers, parts, opts)
		checkPlan(t, brokers, parts, plan)
		var b strings.Builder
		for _, r := range plan.Reassignments {
			fmt.Fprintf(&b, "%s/%d: %v -> %v\n", r.Topic, r.Partition, r.Old, r.Replicas)
		}
		fmt.Fprintf(&b, "moves=%d bytes=%d reorders=%d unplaced=%d\n", plan.Moves, plan.MovedBytes, plan.Reorders, plan.Unplaced)
		after := apply(parts, plan)
		b.WriteString(describeLoads(brokers, after))
		if again := Compute(brokers, after, opts); len(again.Reassignments) > 0 {
			fmt.Fprintf(&b, "replan: %d reassignments\n", len(again.Reassignments))
		}
		return b.String()
	})
}

func parseCase(t *testing.T, input string) ([]Broker, []Partition) {
	var brokers []Broker
	var parts []Partition
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		kv := map[string]string{}
		for _, x := range f[1:] {
			k, v, _ := strings.Cut(x, "=")
			kv[k] = v
		}
		switch f[0] {
		case "broker":
			b := Broker{ID: int32(atoi(t, f[1])), Rack: kv["rack"]}
			if _, ok := kv["fenced"]; ok {
				b.State = Fenced
			}
			if _, ok := kv["decommissioning"]; ok {
				b.State = Decommissioning
			}
			brokers = append(brokers, b)
		case "part":
			p := Partition{Topic: f[1], Partition: int32(atoi(t, f[2])), Replicas: ids(t, f[3])}
			if s, ok := kv["size"]; ok {
				p.Size = int64(atoi(t, s))
			}
			_, p.Pinned = kv["pinned"]
			parts = append(parts, p)
		case "gen":
			size := int64(0)
			if s, ok := kv["size"]; ok {
				size = int64(atoi(t, s))
			}
			parts = append(parts, genPartitions(f[1], atoi(t, kv["count"]), atoi(t, kv["rf"]), ids(t, kv["on"]), func(int) int64 { return size })...)
		default:
			t.Fatalf("unknown line %q", line)
		}
	}
	return brokers, parts
}

func atoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func ids(t *testing.T, s string) []int32 {
	var out []int32
	for _, x := range strings.Split(s, ",") {
		out = append(out, int32(atoi(t, x)))
	}
	return out
}

// TestPlanProperties checks random clusters: every plan keeps the
// replication factor, lists no broker twice, places new replicas only on
// alive brokers and keeps the rack rule; draining brokers end empty when
// enough brokers remain; counts end within bounds when no rack rule binds;
// and planning again on the result converges to an empty plan.
func TestPlanProperties(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		brokers, parts := randomCluster(rng)
		parts0 := parts
		var plan Plan
		for round := 0; ; round++ {
			plan = Compute(brokers, parts, Options{})
			checkPlan(t, brokers, parts, plan)
			if len(plan.Reassignments) == 0 {
				break
			}
			if round == 3 {
				t.Fatalf("seed %d: still %d reassignments after %d rounds", seed, len(plan.Reassignments), round)
			}
			parts = apply(parts, plan)
		}
		checkDrained(t, seed, brokers, parts0, parts)
	}
}

// checkDrained: with at least rf alive brokers, no replica of an unpinned
// partition is left on a decommissioning broker.
func checkDrained(t *testing.T, seed uint64, brokers []Broker, before, after []Partition) {
	alive := 0
	for _, b := range brokers {
		if b.State == Alive {
			alive++
		}
	}
	for i, p := range after {
		if before[i].Pinned || len(p.Replicas) > alive {
			continue
		}
		for _, id := range p.Replicas {
			for _, b := range brokers {
				if b.ID == id && b.State == Decommissioning {
					t.Fatalf("seed %d: %s/%d still on decommissioning broker %d: %v", seed, p.Topic, p.Partition, id, p.Replicas)
				}
			}
		}
	}
}

// TestPlanCountsWithinBounds: without racks, counts and leaders end
// within the bounds after adding brokers.
func TestPlanCountsWithinBounds(t *testing.T) {
	for seed := range uint64(100) {
		rng := rand.New(rand.NewPCG(seed, 11))
		n := 3 + rng.IntN(8)
		var brokers []Broker
		var old []int32
		for i := range n + 2 {
			brokers = append(brokers, Broker{ID: int32(i + 1)})
			if i < n {
				old = append(old, int32(i+1))
			}
		}
		parts := genPartitions("t", 10+rng.IntN(500), 1+rng.IntN(3), old, func(int) int64 { return rng.Int64N(1000) })
		plan := Compute(brokers, parts, Options{})
		after := loads(apply(parts, plan))
		var reps, leads int
		for _, l := range after {
			reps += l.replicas
			leads += l.leaders
		}
		rlo, rhi := bounds(float64(reps)/float64(len(brokers)), DefaultTolerance)
		llo, lhi := bounds(float64(leads)/float64(len(brokers)), DefaultTolerance)
		for _, b := range brokers {
			l := after[b.ID]
			if l == nil {
				l = &load{}
			}
			if l.replicas < rlo || l.replicas > rhi || l.leaders < llo || l.leaders > lhi {
				t.Fatalf("seed %d: broker %d has %d replicas (bounds %d-%d), %d leaders (bounds %d-%d)", seed, b.ID, l.replicas, rlo, rhi, l.leaders, llo, lhi)
			}
		}
	}
}

// BenchmarkPlan100Brokers100kPartitions: 100 brokers, 10 of them new and
// empty, 100,000 partitions of RF 3 with random sizes on the other 90.
func BenchmarkPlan100Brokers100kPartitions(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	var brokers []Broker
	var old []int32
	for i := range 100 {
		brokers = append(brokers, Broker{ID: int32(i + 1), Rack: string(rune('a' + i%5))})
		if i < 90 {
			old = append(old, int32(i+1))
		}
	}
	parts := genPartitions("t", 100_000, 3, old, func(int) int64 { return rng.Int64N(1 << 30) })
	b.ReportAllocs()
	b.ResetTimer()
	var plan Plan
	for range b.N {
		plan = Compute(brokers, parts, Options{})
	}
	b.ReportMetric(float64(plan.Moves), "moves")
	b.ReportMetric(float64(len(plan.Reassignments)), "reassignments")
}
