package cleaner

import "github.com/prometheus/client_golang/prometheus"

// metrics are the cleaner's own Prometheus series (Kafka has none of
// them), registered on the node's registry; the Kafka-named gauges are
// KafkaCollector's.
type metrics struct {
	runs         prometheus.Counter
	failures     prometheus.Counter
	bytesRead    prometheus.Counter
	bytesWritten prometheus.Counter
	duration     prometheus.Histogram
	dirtyRatio   *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		runs: prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_log_cleaner_runs_total",
			Help: "Cleans of a log completed by the log cleaner."}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_log_cleaner_failures_total",
			Help: "Cleans of a log that failed or were aborted."}),
		bytesRead: prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_log_cleaner_read_bytes_total",
			Help: "Bytes the log cleaner read (offset map and copy passes)."}),
		bytesWritten: prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_log_cleaner_written_bytes_total",
			Help: "Bytes the log cleaner wrote into cleaned segments."}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "sluice_log_cleaner_clean_seconds",
			Help: "Time one clean of a log took.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}),
		dirtyRatio: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "sluice_log_cleaner_dirty_ratio",
			Help: "Share of a compacted partition's cleanable bytes not cleaned yet."}, []string{"topic", "partition"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.runs, m.failures, m.bytesRead, m.bytesWritten, m.duration, m.dirtyRatio} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
