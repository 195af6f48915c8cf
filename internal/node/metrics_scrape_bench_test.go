package node

import (
	"bytes"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/testbin"
	"github.com/sluice-io/sluice/internal/testutil"
)

var (
	scrapeTopics     = flag.Int("scrape.topics", 100, "BenchmarkScrape: topics")
	scrapePartitions = flag.Int("scrape.partitions", 100, "BenchmarkScrape: partitions per topic")
	scrapeCount      = flag.Int("scrape.count", 5, "BenchmarkScrape: scrapes measured")
	scrapeGathered   = flag.Bool("scrape.gathered", false,
		"BenchmarkScrape: serve /metrics with client_golang's handler over the gathered registry, as before the streamed one")
)

// prometheusAccept is the Accept header Prometheus 3 scrapes with.
const prometheusAccept = "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5," +
	"application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3," +
	"text/plain;version=0.0.4;q=0.2,*/*;q=0.1"

// BenchmarkScrape times a full /metrics scrape of a single node holding
// 100 topics x 100 partitions (RF 1) with 5 records in each partition and
// three groups with committed offsets (one on every partition, two on one
// topic each), over HTTP from the node's metrics listener with the headers
// Prometheus sends (gzip accepted). It reports each scrape's time and
// three heap figures of a scrape: what it allocates (measured with the GC
// off from a collected heap: an upper bound of its peak), its peak live
// heap (sampled with the GC at GOGC=5: the target is judged on this one)
// and what it leaves live after a GC; and the heap the metric state holds
// (live bytes allocated from the metrics files and client_golang, with
// every allocation profiled):
//
//	go test -run '^$' -bench Scrape -benchtime 1x -timeout 30m ./internal/node
func BenchmarkScrape(b *testing.B) {
	defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
	runtime.MemProfileRate = 1 // before the node: attribute every live byte
	port := testbin.FreePort(b)
	bn := startBenchNode(b, b.TempDir(), map[string]string{"sluice.metrics.listener": fmt.Sprintf("127.0.0.1:%d", port)}, nil)
	topics := fillScrapeNode(b, bn)
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	body, _ := scrape(b, url) // a first scrape creates what scrapes reuse
	text := checkScrape(b, body, topics)
	state := metricStateHeap()
	runtime.MemProfileRate = 0 // the timed scrapes run unprofiled
	var times []time.Duration
	var peak, retained uint64
	for b.Loop() {
		for range *scrapeCount {
			s := measureScrape(b, url)
			times = append(times, s.took)
			peak, retained = max(peak, s.allocated), max(retained, s.retained)
		}
	}
	slices.Sort(times)
	var live uint64
	for range *scrapeCount {
		live = max(live, measurePeakLive(b, url))
	}
	b.Logf("scrape: %d bytes gzipped, %d bytes, %d lines; times %v", len(body), len(text), strings.Count(text, "\n"), times)
	b.Logf("allocated during a scrape (GC off; bounds its peak) max %.1f MiB; live after a scrape and GC max %.2f MiB; metric state %.2f MiB",
		mib(peak), mib(retained), mib(state))
	b.ReportMetric(float64(times[len(times)/2].Milliseconds()), "median-scrape-ms")
	b.ReportMetric(float64(times[len(times)-1].Milliseconds()), "max-scrape-ms")
	b.Logf("peak extra live heap (sampled every 200µs at GOGC=5) max %.1f MiB", mib(live))
	b.ReportMetric(mib(live), "peak-live-heap-MiB")
	b.ReportMetric(mib(peak), "scrape-alloc-MiB")
	b.ReportMetric(mib(retained), "scrape-retained-MiB")
	b.ReportMetric(mib(state), "metric-state-MiB")
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }

// fillScrapeNode creates the topics, writes their records, commits the
// groups' offsets and waits until the node hosts every partition; it
// returns the topics' names.
func fillScrapeNode(b *testing.B, bn *benchNode) []string {
	b.Helper()
	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bn.addr), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	adm.SetTimeoutMillis(300_000)
	topics := make([]string, *scrapeTopics)
	for i := range topics {
		topics[i] = fmt.Sprintf("scrape-%03d", i)
	}
	// Ten topics a request: the controller takes at most
	// MaxRecordsPerOperation records per operation.
	for batch := range slices.Chunk(topics, 10) {
		created, err := adm.CreateTopics(ctx, int32(*scrapePartitions), 1, nil, batch...)
		if err == nil {
			err = created.Error()
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	want := len(topics) * *scrapePartitions
	testutil.Eventually(b, 5*time.Minute, func() bool { return bn.n.broker.replicas.ReplicaCounts().Leaders == want },
		"%d partitions led", want)
	value := make([]byte, 100)
	for _, topic := range topics {
		for p := range *scrapePartitions {
			for range 5 {
				cl.Produce(ctx, &kgo.Record{Topic: topic, Partition: int32(p), Value: value}, nil)
			}
		}
	}
	if err := cl.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	commitGroup(b, adm, "scrape-all", topics)
	commitGroup(b, adm, "scrape-one", topics[:1])
	commitGroup(b, adm, "scrape-two", topics[1:2])
	return topics
}

// commitGroup commits offset 3 on every partition of topics for group.
func commitGroup(b *testing.B, adm *kadm.Client, group string, topics []string) {
	b.Helper()
	offsets := kadm.Offsets{}
	for _, topic := range topics {
		for p := range *scrapePartitions {
			offsets.Add(kadm.Offset{Topic: topic, Partition: int32(p), At: 3, LeaderEpoch: -1})
		}
	}
	resp, err := adm.CommitOffsets(context.Background(), group, offsets)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		b.Fatalf("commit %s: %v", group, err)
	}
}

// scrape gets url as Prometheus does and returns the body as sent
// (gzipped) and the time from the request to its last byte.
func scrape(b *testing.B, url string) ([]byte, time.Duration) {
	b.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Accept", prometheusAccept)
	req.Header.Set("Accept-Encoding", "gzip") // set by hand: the client leaves the body compressed
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	took := time.Since(start)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("scrape: %d %v", resp.StatusCode, err)
	}
	return body, took
}

// scrapeSample is one measured scrape.
type scrapeSample struct {
	took                time.Duration
	allocated, retained uint64
}

// measureScrape scrapes once from a collected heap with the GC off, so the
// heap's growth bounds the scrape's peak (the node's own work in that time
// counts too), then collects and reads what stayed live.
func measureScrape(b *testing.B, url string) scrapeSample {
	b.Helper()
	runtime.GC()
	var before, during, after runtime.MemStats
	runtime.ReadMemStats(&before)
	gc := debug.SetGCPercent(-1)
	_, took := scrape(b, url)
	runtime.ReadMemStats(&during)
	debug.SetGCPercent(gc)
	runtime.GC()
	runtime.ReadMemStats(&after)
	s := scrapeSample{took: took, allocated: during.HeapAlloc - before.HeapAlloc}
	if after.HeapAlloc > before.HeapAlloc {
		s.retained = after.HeapAlloc - before.HeapAlloc
	}
	return s
}

// measurePeakLive scrapes once with the GC running at GOGC=5, so little
// garbage outlives a cycle, sampling the heap's objects every 200µs; it
// returns the largest sample above the collected heap before the scrape.
func measurePeakLive(b *testing.B, url string) uint64 {
	b.Helper()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	runtime.GC()
	base := read()
	gc := debug.SetGCPercent(5)
	defer debug.SetGCPercent(gc)
	stop, peak := make(chan struct{}), make(chan uint64)
	go func() {
		top := base
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				peak <- top
				return
			case <-tick.C:
				top = max(top, read())
			}
		}
	}()
	scrape(b, url)
	close(stop)
	return <-peak - base
}

// metricStateHeap is the live heap, as of a GC, allocated with a metrics
// file of ours (metrics*.go, reqmetrics.go, socketmetrics.go,
// errcounts.go, server's histogram.go) or client_golang on the stack.
func metricStateHeap() uint64 {
	runtime.GC()
	runtime.GC() // the profile is the last completed cycle's
	var recs []runtime.MemProfileRecord
	for {
		n, ok := runtime.MemProfile(recs, false)
		if ok {
			recs = recs[:n]
			break
		}
		recs = make([]runtime.MemProfileRecord, n+100)
	}
	var total uint64
	for _, r := range recs {
		if r.InUseBytes() > 0 && metricStack(r.Stack()) {
			total += uint64(r.InUseBytes())
		}
	}
	return total
}

func metricStack(stack []uintptr) bool {
	frames := runtime.CallersFrames(stack)
	for {
		f, more := frames.Next()
		base := filepath.Base(f.File)
		switch {
		case strings.Contains(f.File, "prometheus/client_golang"),
			strings.HasPrefix(base, "metrics") && !strings.HasSuffix(base, "_test.go"),
			strings.Contains(f.File, "internal/server/") &&
				(base == "reqmetrics.go" || base == "socketmetrics.go" || base == "errcounts.go" || base == "histogram.go"):
			return true
		}
		if !more {
			return false
		}
	}
}

// checkScrape fails unless the body holds the per-partition and per-group
// series of the node's topics.
func checkScrape(b *testing.B, gz []byte, topics []string) string {
	b.Helper()
	text := gunzip(b, gz)
	for _, want := range []string{
		fmt.Sprintf(`kafka_log_log_size{partition="%d",topic="%s"}`, *scrapePartitions-1, topics[len(topics)-1]),
		fmt.Sprintf(`kafka_consumergroup_lag{consumergroup="scrape-all",partition="%d",topic="%s"} 2`, *scrapePartitions-1, topics[len(topics)-1]),
		`kafka_server_replicamanager_partitioncount`,
	} {
		if !strings.Contains(text, want) {
			b.Fatalf("scrape lacks %s", want)
		}
	}
	return text
}

func gunzip(b *testing.B, gz []byte) string {
	b.Helper()
	r, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		b.Fatal(err)
	}
	text, err := io.ReadAll(r)
	if err != nil {
		b.Fatal(err)
	}
	return string(text)
}
