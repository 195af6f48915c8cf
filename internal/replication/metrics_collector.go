package replication

import (
	"github.com/prometheus/client_golang/prometheus"
)

// topicCounter is one BrokerTopicMetrics family: its series without labels
// (all topics) and with a topic label, as the JMX exporter renders Kafka's
// aggregate and per-topic MBeans.
type topicCounter struct {
	all, topic *prometheus.Desc
	value      func(*TopicCounts) int64
}

func newTopicCounter(name, help string, value func(*TopicCounts) int64) topicCounter {
	fq := "kafka_server_brokertopicmetrics_" + name + "_total"
	return topicCounter{
		all:   prometheus.NewDesc(fq, help, nil, nil),
		topic: prometheus.NewDesc(fq, help, []string{"topic"}, nil),
		value: value,
	}
}

// Collector is the replica manager's Prometheus collector: the
// BrokerTopicMetrics counters and the ReplicaManager and
// ReplicaFetcherManager series, read at scrape time. It describes nothing
// (an unchecked collector): a family holds series with and without the
// topic label, which the registry's checks would refuse.
type Collector struct {
	rm                 *ReplicaManager
	topicCounters      []topicCounter
	replicationIn      *prometheus.Desc
	replicationOut     *prometheus.Desc
	partitions         *prometheus.Desc
	leaders            *prometheus.Desc
	underReplicated    *prometheus.Desc
	underMinISR        *prometheus.Desc
	atMinISR           *prometheus.Desc
	offline            *prometheus.Desc
	isrShrinks         *prometheus.Desc
	isrExpands         *prometheus.Desc
	failedISRUpdates   *prometheus.Desc
	fetcherMaxLag      *prometheus.Desc
	fetcherMaxLagLabel string
}

// NewCollector returns the collector of rm's series; register it on the
// node's registry.
func NewCollector(rm *ReplicaManager) *Collector {
	rmDesc := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("kafka_server_replicamanager_"+name, help, nil, nil)
	}
	return &Collector{
		rm: rm,
		topicCounters: []topicCounter{
			newTopicCounter("bytesin", "Record batch bytes appended by this broker as leader for produce requests (Kafka's BytesInPerSec).",
				func(c *TopicCounts) int64 { return c.BytesIn }),
			newTopicCounter("messagesin", "Records appended by this broker as leader for produce requests (Kafka's MessagesInPerSec).",
				func(c *TopicCounts) int64 { return c.MessagesIn }),
			newTopicCounter("bytesout", "Record bytes in fetch answers to consumers (Kafka's BytesOutPerSec).",
				func(c *TopicCounts) int64 { return c.BytesOut }),
			newTopicCounter("bytesrejected", "Bytes of produced batches refused as larger than max.message.bytes (Kafka's BytesRejectedPerSec).",
				func(c *TopicCounts) int64 { return c.BytesRejected }),
			newTopicCounter("failedproducerequests", "Produce partitions that failed other than for leadership, size, corruption or storage (Kafka's FailedProduceRequestsPerSec).",
				func(c *TopicCounts) int64 { return c.FailedProduceRequests }),
			newTopicCounter("failedfetchrequests", "Fetch partitions that failed other than for leadership, epochs, offsets or storage (Kafka's FailedFetchRequestsPerSec).",
				func(c *TopicCounts) int64 { return c.FailedFetchRequests }),
			newTopicCounter("totalproducerequests", "Partitions of produce requests that reached the replica manager (Kafka's TotalProduceRequestsPerSec).",
				func(c *TopicCounts) int64 { return c.TotalProduceRequests }),
			newTopicCounter("totalfetchrequests", "Partitions of fetch requests, consumers' and followers', at their first read (Kafka's TotalFetchRequestsPerSec).",
				func(c *TopicCounts) int64 { return c.TotalFetchRequests }),
		},
		replicationIn: prometheus.NewDesc("kafka_server_brokertopicmetrics_replicationbytesin_total",
			"Record bytes this broker fetched as a follower (Kafka's ReplicationBytesInPerSec).", nil, nil),
		replicationOut: prometheus.NewDesc("kafka_server_brokertopicmetrics_replicationbytesout_total",
			"Record bytes in fetch answers to followers (Kafka's ReplicationBytesOutPerSec).", nil, nil),
		partitions:      rmDesc("partitioncount", "Partitions hosted by this broker, those whose log failed to load included."),
		leaders:         rmDesc("leadercount", "Partitions this broker leads."),
		underReplicated: rmDesc("underreplicatedpartitions", "Partitions this broker leads whose ISR is smaller than their replicas."),
		underMinISR:     rmDesc("underminisrpartitioncount", "Partitions this broker leads whose ISR is below min.insync.replicas."),
		atMinISR:        rmDesc("atminisrpartitioncount", "Partitions this broker leads whose ISR is exactly min.insync.replicas."),
		offline:         rmDesc("offlinereplicacount", "Partitions hosted here whose log failed to load or whose log dir is offline."),
		isrShrinks:      prometheus.NewDesc("kafka_server_replicamanager_isrshrinks_total", "ISR shrinks of partitions led here, committed by the controller.", nil, nil),
		isrExpands:      prometheus.NewDesc("kafka_server_replicamanager_isrexpands_total", "ISR expansions of partitions led here, committed by the controller.", nil, nil),
		failedISRUpdates: prometheus.NewDesc("kafka_server_replicamanager_failedisrupdates_total",
			"ISR changes the controller refused or could not be asked.", nil, nil),
		fetcherMaxLag: prometheus.NewDesc("kafka_server_replicafetchermanager_maxlag",
			"Largest lag, in offsets, of a partition followed here behind its leader's high watermark.", []string{"clientid"}, nil),
		fetcherMaxLagLabel: "Replica",
	}
}

// Describe sends nothing: the collector is unchecked (see Collector).
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// Collect reads the counters and computes the gauges.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.collectTopics(ch)
	counts := c.rm.ReplicaCounts()
	gauge := func(d *prometheus.Desc, v int) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v))
	}
	gauge(c.partitions, counts.Partitions)
	gauge(c.leaders, counts.Leaders)
	gauge(c.underReplicated, counts.UnderReplicated)
	gauge(c.underMinISR, counts.UnderMinISR)
	gauge(c.atMinISR, counts.AtMinISR)
	gauge(c.offline, counts.Offline)
	shrinks, expands, failed := c.rm.ISRChangeCounts()
	counter(ch, c.isrShrinks, shrinks)
	counter(ch, c.isrExpands, expands)
	counter(ch, c.failedISRUpdates, failed)
	ch <- prometheus.MustNewConstMetric(c.fetcherMaxLag, prometheus.GaugeValue, float64(counts.MaxFetcherLag), c.fetcherMaxLagLabel)
}

// collectTopics sends the BrokerTopicMetrics, aggregate then per topic.
func (c *Collector) collectTopics(ch chan<- prometheus.Metric) {
	stats := c.rm.BrokerTopicStats()
	all, topics := stats.Snapshot()
	for _, tc := range c.topicCounters {
		counter(ch, tc.all, tc.value(&all))
	}
	counter(ch, c.replicationIn, stats.ReplicationBytesIn.Load())
	counter(ch, c.replicationOut, stats.ReplicationBytesOut.Load())
	for i := range topics {
		for _, tc := range c.topicCounters {
			counter(ch, tc.topic, tc.value(&topics[i].TopicCounts), topics[i].Topic)
		}
	}
}

func counter(ch chan<- prometheus.Metric, d *prometheus.Desc, v int64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
}
