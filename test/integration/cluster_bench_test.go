package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/testcluster"
	"github.com/sluice-io/sluice/internal/testutil"
)

// BenchmarkControllerFailover measures, on 3 combined nodes run as
// processes with Kafka's default quorum timeouts, the time from kill -9 of
// the active controller to the first successful metadata write (a
// CreateTopics through the surviving brokers); it reports the median.
//
//	go test ./test/integration -run '^$' -bench ControllerFailover -benchtime 10x
func BenchmarkControllerFailover(b *testing.B) {
	benchmarkFailover(b, nil)
}

// BenchmarkControllerFailoverTight is BenchmarkControllerFailover with
// tighter quorum timeouts (election 300 ms, fetch 600 ms).
//
//	go test ./test/integration -run '^$' -bench ControllerFailoverTight -benchtime 10x
func BenchmarkControllerFailoverTight(b *testing.B) {
	benchmarkFailover(b, map[string]string{
		"controller.quorum.election.timeout.ms": "300",
		"controller.quorum.fetch.timeout.ms":    "600",
	})
}

func benchmarkFailover(b *testing.B, overrides map[string]string) {
	c := testcluster.StartProcesses(b, binaryPath, testcluster.Options{Nodes: 3, Overrides: overrides})
	addrs := c.Layout.BrokerAddrs()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.RetryBackoffFn(func(int) time.Duration { return 10 * time.Millisecond }))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var samples []time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		leader := awaitLeader(b, addrs)
		b.StartTimer()
		start := time.Now()
		c.Kill(int(leader) - 1)
		// A measurement: a fixed 10 ms poll keeps the sample's resolution
		// (testutil.Eventually's pause grows).
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			resp, err := adm.CreateTopic(ctx, 1, 1, nil, fmt.Sprintf("failover-%d", i))
			cancel()
			if err == nil && resp.Err == nil {
				break
			}
			if time.Since(start) > 60*time.Second {
				b.Fatalf("no metadata write 60s after the kill: %v %v", err, resp.Err)
			}
			time.Sleep(10 * time.Millisecond)
		}
		samples = append(samples, time.Since(start))
		b.StopTimer()
		c.Start(int(leader) - 1)
		b.StartTimer()
	}
	slices.Sort(samples)
	b.ReportMetric(float64(samples[len(samples)/2].Milliseconds()), "ms-median-failover")
}

// awaitLeader asks the brokers for the quorum's leader until one is known.
func awaitLeader(b *testing.B, addrs []string) int32 {
	var leader int32
	testutil.Eventually(b, 30*time.Second, func() bool {
		for _, a := range addrs {
			if l, err := describeQuorumLeader(a); err == nil && l > 0 {
				leader = l
				return true
			}
		}
		return false
	}, "a quorum leader")
	return leader
}

// BenchmarkTopicCreation measures topics of one partition created per
// second through a broker of 3 combined in-process nodes, 100 topics per
// CreateTopics request.
//
//	go test ./test/integration -run '^$' -bench TopicCreation -benchtime 2000x
func BenchmarkTopicCreation(b *testing.B) {
	c := testcluster.Start(b, testcluster.Options{Nodes: 3})
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Layout.BrokerAddrs()...))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	const perRequest = 100
	b.ResetTimer()
	start := time.Now()
	for done := 0; done < b.N; done += perRequest {
		names := make([]string, 0, perRequest)
		for j := done; j < min(done+perRequest, b.N); j++ {
			names = append(names, fmt.Sprintf("bench-%d", j))
		}
		resps, err := adm.CreateTopics(context.Background(), 1, 1, nil, names...)
		if err != nil {
			b.Fatal(err)
		}
		if err := resps.Error(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "topics/s")
}

// BenchmarkClusterStartup10kPartitions creates 10,000 partitions (100
// topics of 100) on 3 combined nodes run as processes, reports the active
// controller's RSS, then restarts the whole cluster and reports the time
// from the start of the processes until Metadata shows every partition led.
// The node stopped last could not tell a quorum it was leaving, so its
// registration stays live; it stopped cleanly, so its next registration
// names its previous broker epoch (KIP-966) and is taken at once instead of
// after its session (broker.session.timeout.ms) expires.
//
//	go test ./test/integration -run '^$' -bench ClusterStartup10k -benchtime 1x
func BenchmarkClusterStartup10kPartitions(b *testing.B) {
	c := testcluster.StartProcesses(b, binaryPath, testcluster.Options{Nodes: 3})
	addrs := c.Layout.BrokerAddrs()
	admin := func() (*kadm.Client, func()) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
		if err != nil {
			b.Fatal(err)
		}
		return kadm.NewClient(cl), cl.Close
	}
	adm, done := admin()
	for i := range 100 {
		resp, err := adm.CreateTopic(context.Background(), 100, 1, nil, fmt.Sprintf("p10k-%03d", i))
		if err != nil || resp.Err != nil {
			b.Fatalf("create topic %d: %v %v", i, err, resp.Err)
		}
	}
	done()
	leader := awaitLeader(b, addrs)
	rss, err := rssKiB(c.Pid(int(leader) - 1))
	if err != nil {
		b.Fatalf("controller RSS: %v", err)
	}
	for i := range 3 {
		c.Stop(i)
	}
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		c.StartAll()
		adm, done := admin()
		// A measurement: a fixed 20 ms poll keeps the sample's resolution.
		for !allLed(adm, 10000) {
			if time.Since(start) > 120*time.Second {
				b.Fatal("not every partition led 120s after the restart")
			}
			time.Sleep(20 * time.Millisecond)
		}
		done()
		b.ReportMetric(time.Since(start).Seconds(), "s-until-all-led")
		b.ReportMetric(float64(rss)/1024, "MiB-controller-rss")
		b.StopTimer()
		for i := range 3 {
			c.Stop(i)
		}
		b.StartTimer()
	}
}

// allLed reports whether Metadata shows want partitions, all with a leader.
func allLed(adm *kadm.Client, want int) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	md, err := adm.Metadata(ctx)
	if err != nil {
		return false
	}
	n := 0
	for _, t := range md.Topics {
		for _, p := range t.Partitions {
			if p.Leader < 0 || p.Err != nil {
				return false
			}
			n++
		}
	}
	return n >= want
}

// rssKiB reads a process's resident set size from /proc.
func rssKiB(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kib int64
			_, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kib)
			return kib, err
		}
	}
	return 0, errors.New("no VmRSS in /proc status")
}
