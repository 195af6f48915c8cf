package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"text/tabwriter"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sluice-io/sluice/internal/latency"
)

// benchStats is what a bench run measures; the mutex lets the progress
// line read it while the run updates it.
type benchStats struct {
	mu      sync.Mutex
	start   time.Time
	records uint64
	bytes   uint64
	errors  uint64
	latency latency.Histogram
}

func (s *benchStats) add(n int, took time.Duration) {
	s.mu.Lock()
	s.records++
	s.bytes += uint64(n)
	s.latency.Record(took)
	s.mu.Unlock()
}

func (s *benchStats) failed() {
	s.mu.Lock()
	s.errors++
	s.mu.Unlock()
}

// benchResult is the final report, also the --json shape.
type benchResult struct {
	Kind           string  `json:"kind"`
	Topic          string  `json:"topic"`
	Records        uint64  `json:"records"`
	Bytes          uint64  `json:"bytes"`
	Errors         uint64  `json:"errors"`
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	RecordsPerSec  float64 `json:"records_per_sec"`
	MBPerSec       float64 `json:"mb_per_sec"`
	LatencyName    string  `json:"latency"`
	P50Ms          float64 `json:"latency_p50_ms"`
	P99Ms          float64 `json:"latency_p99_ms"`
	P999Ms         float64 `json:"latency_p999_ms"`
	MaxMs          float64 `json:"latency_max_ms"`
}

func (s *benchStats) result(kind, topic, latencyName string, end time.Time) benchResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	elapsed := end.Sub(s.start).Seconds()
	r := benchResult{
		Kind: kind, Topic: topic, Records: s.records, Bytes: s.bytes, Errors: s.errors,
		ElapsedSeconds: elapsed, LatencyName: latencyName,
		P50Ms:  ms(s.latency.Quantile(0.50)),
		P99Ms:  ms(s.latency.Quantile(0.99)),
		P999Ms: ms(s.latency.Quantile(0.999)),
		MaxMs:  ms(s.latency.Max()),
	}
	if elapsed > 0 {
		r.RecordsPerSec = float64(s.records) / elapsed
		r.MBPerSec = float64(s.bytes) / elapsed / (1 << 20)
	}
	return r
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// write prints the result as a table or as one JSON object.
func (r benchResult) write(out io.Writer, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(out)
		return enc.Encode(r)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "bench %s\t%s\n", r.Kind, r.Topic)
	fmt.Fprintf(tw, "records\t%d\n", r.Records)
	fmt.Fprintf(tw, "errors\t%d\n", r.Errors)
	fmt.Fprintf(tw, "bytes\t%d\n", r.Bytes)
	fmt.Fprintf(tw, "elapsed\t%.3f s\n", r.ElapsedSeconds)
	fmt.Fprintf(tw, "records/s\t%.1f\n", r.RecordsPerSec)
	fmt.Fprintf(tw, "MB/s\t%.2f\n", r.MBPerSec)
	fmt.Fprintf(tw, "latency\t%s\n", r.LatencyName)
	fmt.Fprintf(tw, "  p50\t%.3f ms\n", r.P50Ms)
	fmt.Fprintf(tw, "  p99\t%.3f ms\n", r.P99Ms)
	fmt.Fprintf(tw, "  p99.9\t%.3f ms\n", r.P999Ms)
	fmt.Fprintf(tw, "  max\t%.3f ms\n", r.MaxMs)
	return tw.Flush()
}

// progress prints a live line (records/s, MB/s, p99) every second to out
// while the run lasts, only when out is a terminal.
type progress struct {
	stop chan struct{}
	done chan struct{}
}

func startProgress(out io.Writer, s *benchStats) *progress {
	p := &progress{stop: make(chan struct{}), done: make(chan struct{})}
	f, ok := out.(*os.File)
	if !ok || !isTerminal(f) {
		close(p.done)
		return p
	}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		var lastRecords, lastBytes uint64
		last := time.Now()
		for {
			select {
			case <-p.stop:
				fmt.Fprint(f, "\r\033[K")
				return
			case now := <-tick.C:
				s.mu.Lock()
				records, bytes, errs, p99 := s.records, s.bytes, s.errors, s.latency.Quantile(0.99)
				s.mu.Unlock()
				secs := now.Sub(last).Seconds()
				fmt.Fprintf(f, "\r\033[K%d records  %.0f rec/s  %.2f MB/s  p99 %.2f ms  errors %d",
					records, float64(records-lastRecords)/secs, float64(bytes-lastBytes)/secs/(1<<20), ms(p99), errs)
				lastRecords, lastBytes, last = records, bytes, now
			}
		}
	}()
	return p
}

// finish stops the progress line and waits for its goroutine.
func (p *progress) finish() {
	select {
	case <-p.done:
		return
	default:
	}
	close(p.stop)
	<-p.done
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlReadTermios)
	return err == nil
}
