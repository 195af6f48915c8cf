package sim

import (
	"slices"
	"testing"
	"time"
)

// BenchmarkElectionAfterLeaderLoss measures, in simulated time, how long
// after the leader dies a new leader commits its first operation: three
// voters, no other faults, 2% message loss, 1-20 ms delays. It reports the
// median of 10 seeds per election timeout:
//
//	go test ./internal/sim -run '^$' -bench ElectionAfterLeaderLoss -benchtime 1x
func BenchmarkElectionAfterLeaderLoss(b *testing.B) {
	for _, c := range []struct {
		name    string
		timeout time.Duration
	}{
		{"kafka-defaults-1s", time.Second},
		{"tight-300ms", 300 * time.Millisecond},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				var samples []time.Duration
				for seed := range uint64(10) {
					samples = append(samples, simFailover(b, seed+1, c.timeout))
				}
				slices.Sort(samples)
				b.ReportMetric(float64(samples[len(samples)/2].Milliseconds()), "median-sim-ms/failover")
				b.ReportMetric(float64(samples[len(samples)-1].Milliseconds()), "max-sim-ms/failover")
			}
		})
	}
}

// simFailover returns the simulated time from the leader's crash to the
// first operation committed by its successor. Raft's election jitter is not
// fixed here (testing/cryptotest takes only a *testing.T), so figures vary
// a little between runs of the same seeds.
func simFailover(b *testing.B, seed uint64, timeout time.Duration) time.Duration {
	s, err := New(Config{Seed: seed, ElectionTimeout: timeout, NoFaults: true})
	if err != nil {
		b.Fatal(err)
	}
	committed := func() *node {
		for range 10000 {
			s.step()
			if n := s.leader(); n != nil && s.runOp(n, "probe", s.opProbe(s.stats.Steps)) == nil {
				return n
			}
		}
		b.Fatalf("seed %d: no leader committed: %s", seed, s.describe())
		return nil
	}
	leader := committed()
	start := s.clk.Now()
	s.crash(leader)
	committed()
	if s.violation != nil {
		b.Fatal(s.violation)
	}
	return s.clk.Now().Sub(start)
}
