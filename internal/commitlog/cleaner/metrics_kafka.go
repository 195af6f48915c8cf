package cleaner

import (
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/kafka"
)

// lastClean is what a cleaner thread's last clean measured (Kafka's
// CleanerThread.lastStats).
type lastClean struct {
	bytesRead, bytesWritten int64
	elapsed                 time.Duration
	// bufferUtilization is the share of the offset map's slots the clean
	// filled.
	bufferUtilization float64
}

// uncleanableLog is a partition whose last clean failed (Kafka's
// uncleanable partitions): its log dir and dirty bytes at the failure.
type uncleanableLog struct {
	dir        string
	dirtyBytes int64
}

// kafkaStats holds what Kafka's LogCleaner and LogCleanerManager gauges
// report, updated by the passes and cleans and read at scrape time.
type kafkaStats struct {
	mu sync.Mutex
	// lastRun is when a pass last looked for a log to clean.
	lastRun time.Time
	// maxDirtyRatio and maxCompactionDelay are the last pass's largest
	// dirty ratio and delay past max.compaction.lag.ms.
	maxDirtyRatio      float64
	maxCompactionDelay time.Duration
	// lastCleans is each worker's (cleaner thread's) last clean.
	lastCleans  map[*worker]lastClean
	uncleanable map[kafka.TopicPartition]uncleanableLog
}

func newKafkaStats(now time.Time) *kafkaStats {
	return &kafkaStats{lastRun: now, lastCleans: map[*worker]lastClean{}, uncleanable: map[kafka.TopicPartition]uncleanableLog{}}
}

// checked records a pass over the logs.
func (s *kafkaStats) checked(now time.Time, maxRatio float64, maxDelay time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastRun, s.maxDirtyRatio, s.maxCompactionDelay = now, maxRatio, maxDelay
}

// cleaned records a worker's successful clean of tp.
func (s *kafkaStats) cleaned(w *worker, tp kafka.TopicPartition, res cleanResult, elapsed time.Duration) {
	util := 0.0
	if w.offsets.maxSlots > 0 {
		util = float64(w.offsets.used) / float64(w.offsets.maxSlots)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastCleans[w] = lastClean{bytesRead: res.bytesRead, bytesWritten: res.bytesWritten, elapsed: elapsed, bufferUtilization: util}
	delete(s.uncleanable, tp)
}

// failed marks l uncleanable after a clean failed (not aborted), with the
// dirty bytes the pass that chose it found.
func (s *kafkaStats) failed(l *commitlog.Log, dirty int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.uncleanable[l.TopicPartition()] = uncleanableLog{dir: filepath.Dir(l.Dir()), dirtyBytes: dirty}
}

// prune forgets uncleanable partitions no longer compacted here.
func (s *kafkaStats) prune(current map[kafka.TopicPartition]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for tp := range s.uncleanable {
		if !current[tp] {
			delete(s.uncleanable, tp)
		}
	}
}

// compactionDelay is how long the log's oldest dirty data has waited past
// max.compaction.lag.ms (Kafka's PreCleanStats delay), 0 when it has not.
func compactionDelay(st commitlog.CleanState, opts commitlog.Options, firstDirty int64, now time.Time) time.Duration {
	if opts.MaxCompactionLag <= 0 || opts.MaxCompactionLag >= 1<<62 {
		return 0
	}
	for _, seg := range st.Segments {
		if seg.NextOffset > firstDirty {
			if seg.FirstBatchTimestamp < 0 {
				return 0
			}
			return max(now.Sub(time.UnixMilli(seg.FirstBatchTimestamp))-opts.MaxCompactionLag, 0)
		}
	}
	return 0
}

// KafkaCollector renders the cleaner's state in the names the JMX
// exporter gives Kafka's LogCleaner and LogCleanerManager gauges.
type KafkaCollector struct {
	c       *Cleaner
	logDirs []string

	maxDirty, recopy, maxCleanTime, maxBufferUtil, maxCompactionDelay, deadThreads *prometheus.Desc
	uncleanablePartitions, uncleanableBytes, sinceLastRun                          *prometheus.Desc
}

// NewKafkaCollector returns the collector of c's gauges; logDirs are the
// broker's log dirs, each with its uncleanable series (0 when none).
func NewKafkaCollector(c *Cleaner, logDirs []string) *KafkaCollector {
	cl := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("kafka_log_logcleaner_"+name, help, nil, nil)
	}
	dir := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("kafka_log_logcleanermanager_"+name, help, []string{"logdirectory"}, nil)
	}
	return &KafkaCollector{
		c: c, logDirs: slices.Clone(logDirs),
		maxDirty: prometheus.NewDesc("kafka_log_logcleanermanager_max_dirty_percent",
			"Largest dirty share, in percent, of a compacted log at the last pass (Kafka's LogCleanerManager max-dirty-percent).", nil, nil),
		recopy:             cl("cleaner_recopy_percent", "Bytes written per byte read, in percent, over the threads' last cleans."),
		maxCleanTime:       cl("max_clean_time_secs", "Longest of the threads' last cleans, in seconds."),
		maxBufferUtil:      cl("max_buffer_utilization_percent", "Fullest offset map of the threads' last cleans, in percent."),
		maxCompactionDelay: cl("max_compaction_delay_secs", "Longest wait past max.compaction.lag.ms of a log's dirty data at the last pass, in seconds."),
		deadThreads:        cl("deadthreadcount", "Cleaner threads stopped by an error (a Sluice thread retries a failed clean instead)."),
		uncleanablePartitions: dir("uncleanable_partitions_count",
			"Partitions of the log dir whose last clean failed."),
		uncleanableBytes: dir("uncleanable_bytes", "Dirty bytes of the log dir's partitions whose last clean failed."),
		sinceLastRun: prometheus.NewDesc("kafka_log_logcleanermanager_time_since_last_run_ms",
			"Milliseconds since the cleaner last looked for a log to clean.", nil, nil),
	}
}

// Describe sends the series' descriptions.
func (k *KafkaCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{k.maxDirty, k.recopy, k.maxCleanTime, k.maxBufferUtil, k.maxCompactionDelay,
		k.deadThreads, k.uncleanablePartitions, k.uncleanableBytes, k.sinceLastRun} {
		ch <- d
	}
}

// Collect reads the last pass's and cleans' figures.
func (k *KafkaCollector) Collect(ch chan<- prometheus.Metric) {
	s := k.c.kstats
	now := k.c.clk.Now()
	s.mu.Lock()
	var read, written int64
	var maxElapsed time.Duration
	maxUtil := 0.0
	for _, lc := range s.lastCleans {
		read, written = read+lc.bytesRead, written+lc.bytesWritten
		maxElapsed, maxUtil = max(maxElapsed, lc.elapsed), max(maxUtil, lc.bufferUtilization)
	}
	partitions, bytes := map[string]int{}, map[string]int64{}
	for _, u := range s.uncleanable {
		partitions[u.dir]++
		bytes[u.dir] += u.dirtyBytes
	}
	maxDirty, delay, since := s.maxDirtyRatio, s.maxCompactionDelay, now.Sub(s.lastRun)
	s.mu.Unlock()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(k.maxDirty, 100*maxDirty)
	gauge(k.recopy, 100*float64(written)/float64(max(read, 1)))
	gauge(k.maxCleanTime, maxElapsed.Seconds())
	gauge(k.maxBufferUtil, 100*maxUtil)
	gauge(k.maxCompactionDelay, delay.Seconds())
	gauge(k.deadThreads, 0)
	gauge(k.sinceLastRun, float64(max(since, 0).Milliseconds()))
	for _, dir := range k.dirs(partitions) {
		gauge(k.uncleanablePartitions, float64(partitions[dir]), dir)
		gauge(k.uncleanableBytes, float64(bytes[dir]), dir)
	}
}

// dirs are the configured log dirs and any other dir an uncleanable log
// lies in.
func (k *KafkaCollector) dirs(uncleanable map[string]int) []string {
	out := slices.Clone(k.logDirs)
	for dir := range uncleanable {
		if !slices.Contains(out, dir) {
			out = append(out, dir)
		}
	}
	return out
}
