package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"sluice/internal/testcluster"
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
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, a := range addrs {
			if l, err := describeQuorumLeader(a); err == nil && l > 0 {
				return l
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Fatal("no quorum leader")
	return -1
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
