package quorum

import (
	"context"
	"slices"
	"testing"
	"time"
)

// BenchmarkTCPFailover measures controller failover over real TCP on
// 127.0.0.1: three voters in one process, each with its own transport; the
// leader is stopped and the clock runs until a proposal commits on the new
// leader. It reports the median of 10 failovers per timing:
//
//	go test ./internal/quorum -run '^$' -bench TCPFailover -benchtime 1x
func BenchmarkTCPFailover(b *testing.B) {
	for _, c := range []struct {
		name   string
		timing Timing
	}{
		{"kafka-defaults", DefaultTiming()},
		{"tight-300ms", Timing{TickInterval: 20 * time.Millisecond, ElectionTimeout: 300 * time.Millisecond, FetchTimeout: 600 * time.Millisecond}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				cl := newTCPCluster(b, 3, c.timing)
				var samples []time.Duration
				for range 10 {
					leader := cl.leader(b)
					cl.commit(b, 30*time.Second) // the new term's first write is in
					start := time.Now()
					cl.crash(b, leader)
					cl.commit(b, 30*time.Second)
					samples = append(samples, time.Since(start))
					cl.start(b, leader, c.timing)
				}
				slices.Sort(samples)
				b.ReportMetric(float64(samples[len(samples)/2].Milliseconds()), "median-ms/failover")
				b.ReportMetric(float64(samples[len(samples)-1].Milliseconds()), "max-ms/failover")
			}
		})
	}
}

// commit proposes on whichever voter leads until one proposal commits. Its
// 1 ms pause is part of the measurement: the failover time is read when
// commit returns, so the poll stays fine-grained instead of backing off as
// testutil.Eventually does.
func (c *tcpCluster) commit(tb testing.TB, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		for _, id := range c.ids {
			d := c.drivers[id]
			if d == nil || !d.Status().IsLeader {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_, err := d.Propose(ctx, []byte("probe"))
			cancel()
			if err == nil {
				return
			}
		}
		time.Sleep(time.Millisecond) // the measurement's poll (see above)
	}
	tb.Fatal("no proposal committed")
}
