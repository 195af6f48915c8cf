package console

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// CollectorLister is a registry that also lists its collectors. The
// console then writes /metrics in the text format from the collectors one
// series at a time, instead of gathering every series of the node as
// client_golang messages first: with 10,000 partitions those messages
// were 57 MiB a scrape (BenchmarkScrape). The text is the same.
type CollectorLister interface {
	prometheus.Gatherer
	Collectors() []prometheus.Collector
}

// metricsHandler serves /metrics: streamed from the node's collectors
// when its registry lists them, else client_golang's handler over all.
func (s *Server) metricsHandler(all prometheus.Gatherer) http.Handler {
	opts := promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError,
	}
	fallback := promhttp.HandlerFor(all, opts)
	node, ok := s.opts.Metrics.(CollectorLister)
	if !ok {
		return fallback
	}
	runtime, err := gatherers(nil)
	if err != nil {
		return fallback
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		format := expfmt.NegotiateAccept(r.Header, expfmt.DefaultAcceptedFormats()...)
		if format.FormatType() != expfmt.TypeTextPlain {
			fallback.ServeHTTP(w, r)
			return
		}
		s.streamMetrics(w, r, format, runtime, node.Collectors())
	})
}

// streamMetrics writes the runtime's families and the collectors' in
// name order, as client_golang's Gatherers would.
func (s *Server) streamMetrics(w http.ResponseWriter, r *http.Request, format expfmt.Format, runtime prometheus.Gatherer, cs []prometheus.Collector) {
	families := map[string]*textFamily{}
	for _, c := range cs {
		s.collectText(c, families)
	}
	gathered, err := runtime.Gather()
	if err != nil {
		s.log.Warn("gathering the runtime's metrics", "err", err)
	}
	byName := map[string]*dto.MetricFamily{}
	names := make([]string, 0, len(families)+len(gathered))
	for _, mf := range gathered {
		if _, dup := families[mf.GetName()]; !dup {
			byName[mf.GetName()] = mf
			names = append(names, mf.GetName())
		}
	}
	for name := range families {
		names = append(names, name)
	}
	slices.Sort(names)
	w.Header().Add("Vary", "Accept")
	w.Header().Add("Vary", "Accept-Encoding")
	w.Header().Set("Content-Type", string(format))
	var out io.Writer = w
	if acceptsGzip(r) {
		w.Header().Set("Content-Encoding", "gzip")
		gz := gzip.NewWriter(w)
		defer gz.Close()
		out = gz
	}
	bw := bufio.NewWriterSize(out, 32<<10)
	defer bw.Flush()
	enc := expfmt.NewEncoder(bw, format)
	for _, name := range names {
		if mf, ok := byName[name]; ok {
			if err := enc.Encode(mf); err != nil {
				return // the client went away
			}
			continue
		}
		if err := families[name].write(bw); err != nil {
			return
		}
	}
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(enc) == "gzip" && strings.ReplaceAll(strings.TrimSpace(q), " ", "") != "q=0" {
			return true
		}
	}
	return false
}

// textFamily is one family's series as text lines, with what
// client_golang sorts them by (their label values in label name order).
type textFamily struct {
	name, help string
	typ        dto.MetricType
	// header is the HELP and TYPE lines as client_golang writes them.
	header []byte
	series []textSeries
}

type textSeries struct {
	values []string
	ts     int64
	text   []byte
}

// write writes the family as client_golang's text encoder does: header,
// then the series sorted as its registry sorts them.
func (f *textFamily) write(w *bufio.Writer) error {
	slices.SortFunc(f.series, func(a, b textSeries) int {
		if len(a.values) != len(b.values) {
			return len(a.values) - len(b.values)
		}
		if c := slices.Compare(a.values, b.values); c != 0 {
			return c
		}
		return cmp.Compare(a.ts, b.ts)
	})
	if _, err := w.Write(f.header); err != nil {
		return err
	}
	for _, s := range f.series {
		if _, err := w.Write(s.text); err != nil {
			return err
		}
	}
	return nil
}

// collectText adds c's series to families, each rendered at once by
// client_golang's own text writer (a family of one series, its header cut
// off), so only text is kept.
func (s *Server) collectText(c prometheus.Collector, families map[string]*textFamily) {
	ch := make(chan prometheus.Metric, 256)
	go func() {
		defer close(ch)
		c.Collect(ch)
	}()
	descs := map[*prometheus.Desc]*textFamily{}
	var buf bytes.Buffer
	// One message of each kind is reused for every series.
	var d dto.Metric
	var typ dto.MetricType
	one := &dto.MetricFamily{Type: &typ, Metric: []*dto.Metric{&d}}
	for m := range ch {
		d.Reset()
		if err := m.Write(&d); err != nil {
			s.log.Warn("a metric could not be written", "desc", m.Desc().String(), "err", err)
			continue
		}
		f, err := familyOf(m.Desc(), descs, families, metricType(&d))
		if err != nil {
			s.log.Warn("a metric is not served", "desc", m.Desc().String(), "err", err)
			continue
		}
		buf.Reset()
		typ, one.Name, one.Help = f.typ, &f.name, &f.help
		if _, err := expfmt.MetricFamilyToText(&buf, one); err != nil {
			s.log.Warn("a metric is not served", "desc", m.Desc().String(), "err", err)
			continue
		}
		values := make([]string, len(d.Label))
		for i, l := range d.Label {
			values[i] = l.GetValue()
		}
		text := buf.Bytes()
		n := headerEnd(text)
		if f.header == nil {
			f.header = bytes.Clone(text[:n])
		}
		f.series = append(f.series, textSeries{values: values, ts: d.GetTimestampMs(), text: bytes.Clone(text[n:])})
	}
}

// headerEnd is where a one-series family's text ends its HELP and TYPE
// lines.
func headerEnd(text []byte) int {
	n := 0
	for range 2 {
		if i := bytes.IndexByte(text[n:], '\n'); i >= 0 {
			n += i + 1
		}
	}
	return n
}

// familyOf returns the family of desc, made on its first series.
func familyOf(desc *prometheus.Desc, descs map[*prometheus.Desc]*textFamily, families map[string]*textFamily, typ dto.MetricType) (*textFamily, error) {
	if f, ok := descs[desc]; ok {
		return f, nil
	}
	name, help, err := parseDesc(desc.String())
	if err != nil {
		return nil, err
	}
	f, ok := families[name]
	if !ok {
		f = &textFamily{name: name, help: help, typ: typ}
		families[name] = f
	}
	if f.typ != typ {
		return nil, fmt.Errorf("%s is a %s and a %s", name, f.typ, typ)
	}
	descs[desc] = f
	return f, nil
}

// parseDesc reads the name and help of a Desc's String:
// Desc{fqName: "...", help: "...", ...}.
func parseDesc(s string) (name, help string, err error) {
	rest, ok := strings.CutPrefix(s, "Desc{fqName: ")
	if !ok {
		return "", "", fmt.Errorf("unexpected description %q", s)
	}
	q, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return "", "", fmt.Errorf("description %q: %w", s, err)
	}
	name, _ = strconv.Unquote(q)
	rest, ok = strings.CutPrefix(rest[len(q):], ", help: ")
	if !ok {
		return "", "", fmt.Errorf("unexpected description %q", s)
	}
	if q, err = strconv.QuotedPrefix(rest); err != nil {
		return "", "", fmt.Errorf("description %q: %w", s, err)
	}
	help, _ = strconv.Unquote(q)
	return name, help, nil
}

// metricType is the type of a written metric, as client_golang's
// registry decides it.
func metricType(d *dto.Metric) dto.MetricType {
	switch {
	case d.Gauge != nil:
		return dto.MetricType_GAUGE
	case d.Counter != nil:
		return dto.MetricType_COUNTER
	case d.Summary != nil:
		return dto.MetricType_SUMMARY
	case d.Histogram != nil:
		return dto.MetricType_HISTOGRAM
	default:
		return dto.MetricType_UNTYPED
	}
}
