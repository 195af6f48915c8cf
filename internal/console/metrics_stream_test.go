package console

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// listed is a registry that lists its collectors, as the node's does.
type listed struct {
	*prometheus.Registry
	cs []prometheus.Collector
}

func (l *listed) MustRegister(cs ...prometheus.Collector) {
	l.Registry.MustRegister(cs...)
	l.cs = append(l.cs, cs...)
}

func (l *listed) Collectors() []prometheus.Collector { return l.cs }

// interleaved sends the series of two families mixed and unsorted, as the
// per-partition collectors do.
type interleaved struct{ size, end *prometheus.Desc }

func (c interleaved) Describe(ch chan<- *prometheus.Desc) { ch <- c.size; ch <- c.end }

func (c interleaved) Collect(ch chan<- prometheus.Metric) {
	for _, p := range []string{"9", "10", "1", "0"} {
		for _, topic := range []string{"b", "a.x", `q"u\o` + "\nte"} {
			ch <- prometheus.MustNewConstMetric(c.size, prometheus.GaugeValue, 1e21, topic, p)
			ch <- prometheus.MustNewConstMetric(c.end, prometheus.CounterValue, 0.5, topic, p)
		}
	}
}

func streamRegistry(t *testing.T) *listed {
	t.Helper()
	reg := &listed{Registry: prometheus.NewRegistry()}
	labels := []string{"topic", "partition"}
	reg.MustRegister(interleaved{
		size: prometheus.NewDesc("kafka_log_log_size", `Bytes, with a back\slash and a`+"\nnewline.", labels, nil),
		end:  prometheus.NewDesc("a_end_total", "Ends.", labels, prometheus.Labels{"const": "c"}),
	})
	for _, src := range []string{"x", "y"} { // one family from two collectors
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "shared", Help: "Shared.", ConstLabels: prometheus.Labels{"src": src}}, []string{"k"})
		g.WithLabelValues("2").Set(-3)
		g.WithLabelValues("1").Set(4.25)
		reg.MustRegister(g)
	}
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "z_time_ms", Help: "Times.", Buckets: []float64{1, 10}}, []string{"request"})
	h.WithLabelValues("Produce").Observe(3)
	h.WithLabelValues("Fetch").Observe(30)
	s := prometheus.NewSummary(prometheus.SummaryOpts{Name: "m_summary", Help: "A summary."})
	s.Observe(1)
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_plain_total", Help: "Plain."})
	c.Add(7)
	reg.MustRegister(h, s, c)
	return reg
}

// TestStreamedMetricsEqualClientGolangs checks the streamed /metrics
// against client_golang's handler over the same registry: byte for byte
// once the runtime's families are left out, plain and gzipped, and
// parsable by Prometheus' text parser.
func TestStreamedMetricsEqualClientGolangs(t *testing.T) {
	reg := streamRegistry(t)
	want := serve(t, promhttp.HandlerFor(reg.Registry, promhttp.HandlerOpts{}), "")
	base := startConsole(t, Options{Metrics: reg})
	for _, enc := range []string{"", "gzip"} {
		req, err := http.NewRequest(http.MethodGet, base+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", "text/plain;version=0.0.4;q=0.2,*/*;q=0.1")
		if enc != "" {
			req.Header.Set("Accept-Encoding", enc)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := readBody(t, resp)
		if got := resp.Header.Get("Content-Encoding"); got != enc {
			t.Errorf("Content-Encoding %q, want %q", got, enc)
		}
		parser := expfmt.NewTextParser(model.LegacyValidation)
		if _, err := parser.TextToMetricFamilies(strings.NewReader(body)); err != nil {
			t.Fatalf("streamed /metrics does not parse: %v", err)
		}
		if !strings.Contains(body, "go_goroutines ") {
			t.Error("streamed /metrics lacks the runtime's series")
		}
		if got := withoutRuntime(body); got != want {
			t.Errorf("encoding %q: streamed /metrics differs from client_golang's:\n--- streamed\n%s\n--- client_golang\n%s", enc, got, want)
		}
	}
}

func serve(t *testing.T, h http.Handler, accept string) string {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept", accept)
	h.ServeHTTP(rec, req)
	return rec.Body.String()
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	var r io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		r = gz
	}
	body, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// withoutRuntime drops the go_ and process_ families of a text body.
func withoutRuntime(body string) string {
	var out bytes.Buffer
	for block := range strings.SplitAfterSeq(body, "\n# HELP ") {
		block = strings.TrimPrefix(block, "# HELP ")
		if strings.HasPrefix(block, "go_") || strings.HasPrefix(block, "process_") {
			continue
		}
		out.WriteString("# HELP ")
		out.WriteString(strings.TrimSuffix(block, "# HELP "))
	}
	return out.String()
}
