package server

import (
	"reflect"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/api"
	"github.com/sluice-io/sluice/internal/fetchwire"
)

// The request time histograms, in Kafka's RequestMetrics' order.
const (
	timeTotal = iota
	timeRequestQueue
	timeLocal
	timeRemote
	timeThrottle
	timeResponseQueue
	timeResponseSend
	numTimes
)

// timeSeries are the histograms' names as the JMX exporter renders Kafka's
// kafka.network:type=RequestMetrics,name=TotalTimeMs... (lowercased).
var timeSeries = [numTimes]string{
	timeTotal:         "kafka_network_requestmetrics_totaltimems",
	timeRequestQueue:  "kafka_network_requestmetrics_requestqueuetimems",
	timeLocal:         "kafka_network_requestmetrics_localtimems",
	timeRemote:        "kafka_network_requestmetrics_remotetimems",
	timeThrottle:      "kafka_network_requestmetrics_throttletimems",
	timeResponseQueue: "kafka_network_requestmetrics_responsequeuetimems",
	timeResponseSend:  "kafka_network_requestmetrics_responsesendtimems",
}

var timeHelp = [numTimes]string{
	timeTotal:         "Time from a request's last byte read to its response's last byte written, in ms.",
	timeRequestQueue:  "Time from a request's last byte read to its handler starting (header parse and body decode; Sluice has no request queue), in ms.",
	timeLocal:         "Time the handler worked on the request, its remote time excluded, in ms.",
	timeRemote:        "Time the request was parked waiting (acks=all produce, long-poll fetch), in ms.",
	timeThrottle:      "Client quota throttle time the response carried, in ms.",
	timeResponseQueue: "Time from the handler's answer to the writer taking it, in ms.",
	timeResponseSend:  "Time writing the response, in ms.",
}

// apiMetrics are one request name's series. They are created on the name's
// first request, and the request path reaches them by index, never by label.
type apiMetrics struct {
	name string
	// versions counts requests by version; the last slot counts versions
	// not served (ApiVersions' KIP-511 answers), labelled "unsupported".
	versions []atomic.Uint64
	// errors counts the response's error codes by errorSlot.
	errors [errorSlots]atomic.Uint64
	times  [numTimes]*histogram
	bytes  *histogram
	// plan is the error walk of the key's kmsg response type.
	plan atomic.Pointer[errorPlan]
}

func newAPIMetrics(name string, maxVersion int16) *apiMetrics {
	a := &apiMetrics{name: name, versions: make([]atomic.Uint64, int(maxVersion)+2), bytes: newSizeHistogram()}
	for i := range a.times {
		a.times[i] = newTimeHistogram()
	}
	return a
}

func (a *apiMetrics) countError(code int16, n int) { a.errors[errorSlot(code)].Add(uint64(n)) }

// countVersion counts a request of version v; served is false for a
// version the registry does not serve.
func (a *apiMetrics) countVersion(v int16, served bool) {
	unsupported := len(a.versions) - 1
	if !served || v < 0 || int(v) >= unsupported {
		a.versions[unsupported].Add(1)
		return
	}
	a.versions[v].Add(1)
}

// countErrors counts the error codes of resp: a kmsg body by its type's
// plan, a streamed body (Fetch) by its own tally.
func (a *apiMetrics) countErrors(resp api.Response) {
	if body := resp.Body(); body != nil {
		p := a.plan.Load()
		if p == nil || p.typ != reflect.TypeOf(body) {
			p = newErrorPlan(body)
			a.plan.Store(p)
		}
		p.count(body, a)
		return
	}
	if enc, ok := resp.StreamBody().(*fetchwire.Encoded); ok {
		for _, ec := range enc.ErrorCounts() {
			a.countError(ec.Code, ec.Count)
		}
	}
}

// observe records one request's times and size.
func (a *apiMetrics) observe(t *requestTiming, throttleMs int64) {
	a.times[timeTotal].observe(nanos(t.sent.Sub(t.arrived)))
	a.times[timeRequestQueue].observe(nanos(t.started.Sub(t.arrived)))
	a.times[timeLocal].observe(nanos(t.handled.Sub(t.started) - t.remote))
	a.times[timeRemote].observe(nanos(t.remote))
	a.times[timeThrottle].observe(nanos(time.Duration(throttleMs) * time.Millisecond))
	a.times[timeResponseQueue].observe(nanos(t.dequeued.Sub(t.handled)))
	a.times[timeResponseSend].observe(nanos(t.sent.Sub(t.dequeued)))
	a.bytes.observe(int64(t.bodyBytes))
}

// nanos is a span as observed; a negative one (clocks of different sources)
// counts as zero, as in Kafka's nanosToMs.
func nanos(d time.Duration) int64 { return int64(max(d, 0)) }

// requestMetrics are Kafka's RequestMetrics for every request name.
type requestMetrics struct {
	// byKey holds each API key's series (nil until its first request);
	// the two slots after the keys hold FetchConsumer and FetchFollower.
	byKey []atomic.Pointer[apiMetrics]
	// maxVersion is kmsg's highest version of each key.
	maxVersion []int16

	requests, errors, bytes *prometheus.Desc
	times                   [numTimes]*prometheus.Desc
}

// maxAPIKey bounds the keys looked up in kmsg.
const maxAPIKey = 1024

func newRequestMetrics() *requestMetrics {
	keys := 0
	for k := range maxAPIKey {
		if kmsg.RequestForKey(int16(k)) != nil {
			keys = k + 1
		}
	}
	m := &requestMetrics{
		byKey:      make([]atomic.Pointer[apiMetrics], keys+2),
		maxVersion: make([]int16, keys),
		requests: prometheus.NewDesc("kafka_network_requestmetrics_requests_total",
			"Requests answered, by Kafka's request name and version (RequestsPerSec).", []string{"request", "version"}, nil),
		errors: prometheus.NewDesc("kafka_network_requestmetrics_errors_total",
			"Error codes in responses, by request and Kafka's error name, NONE included (ErrorsPerSec).", []string{"request", "error"}, nil),
		bytes: prometheus.NewDesc("kafka_network_requestmetrics_requestbytes",
			"Request body sizes in bytes (RequestBytes).", []string{"request"}, nil),
	}
	for i := range m.times {
		m.times[i] = prometheus.NewDesc(timeSeries[i], timeHelp[i], []string{"request"}, nil)
	}
	for k := range m.maxVersion {
		if req := kmsg.RequestForKey(int16(k)); req != nil {
			m.maxVersion[k] = req.MaxVersion()
		}
	}
	return m
}

// forKey returns the series of a key (which the registry served, so kmsg
// knows it), creating them on its first request.
func (m *requestMetrics) forKey(key int16) *apiMetrics {
	return m.slot(int(key), kafkaRequestName(key), m.maxVersion[key])
}

// forFetch returns FetchConsumer's or FetchFollower's series.
func (m *requestMetrics) forFetch(follower bool) *apiMetrics {
	if follower {
		return m.slot(len(m.byKey)-1, fetchFollowerName, m.maxVersion[fetchKey])
	}
	return m.slot(len(m.byKey)-2, fetchConsumerName, m.maxVersion[fetchKey])
}

func (m *requestMetrics) slot(i int, name string, maxVersion int16) *apiMetrics {
	if a := m.byKey[i].Load(); a != nil {
		return a
	}
	m.byKey[i].CompareAndSwap(nil, newAPIMetrics(name, maxVersion))
	return m.byKey[i].Load()
}

// record counts one answered request: under its key's name and, for a
// Fetch, under FetchConsumer or FetchFollower too, as Kafka does (errors
// only under the key's name, as Kafka's updateErrorMetrics).
func (m *requestMetrics) record(t *requestTiming, resp api.Response) {
	if m == nil {
		return // recording off (DisableRequestMetrics)
	}
	if t.apiKey < 0 || int(t.apiKey) >= len(m.maxVersion) {
		return // a key kmsg does not know (the registry serves none)
	}
	a := m.forKey(t.apiKey)
	a.countVersion(t.version, t.served)
	a.countErrors(resp)
	a.observe(t, resp.ThrottleMs())
	if t.apiKey == fetchKey {
		f := m.forFetch(t.follower)
		f.countVersion(t.version, t.served)
		f.observe(t, resp.ThrottleMs())
	}
}

const fetchKey = 1

func (m *requestMetrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.requests
	ch <- m.errors
	ch <- m.bytes
	for _, d := range m.times {
		ch <- d
	}
}

func (m *requestMetrics) Collect(ch chan<- prometheus.Metric) {
	for i := range m.byKey {
		a := m.byKey[i].Load()
		if a == nil {
			continue
		}
		for v := range a.versions {
			if n := a.versions[v].Load(); n > 0 {
				label := "unsupported"
				if v < len(a.versions)-1 {
					label = strconv.Itoa(v)
				}
				ch <- prometheus.MustNewConstMetric(m.requests, prometheus.CounterValue, float64(n), a.name, label)
			}
		}
		for slot := range a.errors {
			if n := a.errors[slot].Load(); n > 0 {
				ch <- prometheus.MustNewConstMetric(m.errors, prometheus.CounterValue, float64(n), a.name, errorName(slot))
			}
		}
		for t, h := range a.times {
			ch <- h.metric(m.times[t], a.name)
		}
		ch <- a.bytes.metric(m.bytes, a.name)
	}
}

// DisableRequestMetrics stops the request path recording Kafka's
// RequestMetrics, for benchmarks that compare the produce path with and
// without them (no configuration reaches it). Call it before Start; the
// collector stays registered and reports no request.
func (s *Server) DisableRequestMetrics() { s.metrics.requests = nil }
