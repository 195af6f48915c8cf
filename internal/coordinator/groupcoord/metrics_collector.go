package groupcoord

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/kafka"
)

// Kafka's group-coordinator-metrics and GroupMetadataManager gauges as the
// JMX exporter names them, and the consumer lag series of kafka_exporter,
// which lag dashboards use.
var (
	groupCountDesc         = gcDesc("group_count", "Groups by rebalance protocol.", "protocol")
	classicGroupCountDesc  = gcDesc("classic_group_count", "Classic groups by state.", "state")
	consumerGroupCountDesc = gcDesc("consumer_group_count", "Consumer (KIP-848) groups by state.", "state")
	classicRebalancesDesc  = gcDesc("group_completed_rebalance_count", "Classic group rebalances completed (Kafka's group-completed-rebalance-count).")
	consumerRebalancesDesc = gcDesc("consumer_group_rebalance_count", "Consumer group epoch bumps.")
	offsetCommitsDesc      = gcDesc("offset_commit_count", "Partition offsets committed.")
	offsetExpirationsDesc  = gcDesc("offset_expiration_count", "Partition offsets expired.")
	offsetDeletionsDesc    = gcDesc("offset_deletion_count", "Partition offsets deleted by OffsetDelete.")
	numGroupsDesc          = prometheus.NewDesc("kafka_coordinator_group_groupmetadatamanager_numgroups", "Classic groups this node coordinates.", nil, nil)
	numOffsetsDesc         = prometheus.NewDesc("kafka_coordinator_group_groupmetadatamanager_numoffsets", "Committed offsets of the groups this node coordinates.", nil, nil)

	lagLabels         = []string{"consumergroup", "topic", "partition"}
	currentOffsetDesc = prometheus.NewDesc("kafka_consumergroup_current_offset", "A group's committed offset of a partition.", lagLabels, nil)
	lagDesc           = prometheus.NewDesc("kafka_consumergroup_lag", "High watermark minus committed offset (at least 0), where this node hosts a replica of the partition.", lagLabels, nil)
	lagSumDesc        = prometheus.NewDesc("kafka_consumergroup_lag_sum", "A group's lag summed over a topic's partitions, when every committed partition's lag is known here.", []string{"consumergroup", "topic"}, nil)
	membersDesc       = prometheus.NewDesc("kafka_consumergroup_members", "A group's members.", []string{"consumergroup"}, nil)
)

func gcDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("kafka_server_groupcoordinatormetrics_"+name, help, labels, nil)
}

// HighWatermarks returns the high watermarks it can learn of tps before
// ctx ends; a partition it cannot learn is left out of the map.
type HighWatermarks func(ctx context.Context, tps []kafka.TopicPartition) map[kafka.TopicPartition]int64

// metricsCollector reads the shards when scraped: one call per shard, the
// work linear in the groups and committed offsets.
type metricsCollector struct {
	c       *GroupCoordinator
	hws     HighWatermarks
	timeout time.Duration
}

// NewMetricsCollector returns the group coordinator's metrics and the lag
// of the groups it coordinates. Lag is left out for partitions hws does not
// know: never a guessed value. timeout bounds a scrape's wait for the
// shards and the high watermarks.
func NewMetricsCollector(c *GroupCoordinator, hws HighWatermarks, timeout time.Duration) prometheus.Collector {
	return metricsCollector{c: c, hws: hws, timeout: timeout}
}

func (metricsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{groupCountDesc, classicGroupCountDesc, consumerGroupCountDesc, classicRebalancesDesc,
		consumerRebalancesDesc, offsetCommitsDesc, offsetExpirationsDesc, offsetDeletionsDesc, numGroupsDesc, numOffsetsDesc,
		currentOffsetDesc, lagDesc, lagSumDesc, membersDesc} {
		ch <- d
	}
}

func (m metricsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), m.timeout)
	defer cancel()
	s := m.c.Metrics(ctx, true)
	collectGroupCounts(ch, s)
	if len(s.Groups) == 0 {
		return
	}
	seen := map[kafka.TopicPartition]bool{}
	var tps []kafka.TopicPartition
	for _, g := range s.Groups {
		for _, o := range g.Offsets {
			if !seen[o.Partition] {
				seen[o.Partition] = true
				tps = append(tps, o.Partition)
			}
		}
	}
	hws := m.hws(ctx, tps)
	for _, g := range s.Groups {
		collectLag(ch, g, hws)
	}
}

func collectGroupCounts(ch chan<- prometheus.Metric, s group.MetricsSnapshot) {
	gauge := func(d *prometheus.Desc, v int, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	classic, consumer := 0, 0
	for st, n := range s.ClassicGroups {
		classic += n
		gauge(classicGroupCountDesc, n, group.State(st).String())
	}
	for _, st := range group.ConsumerGroupStates {
		consumer += s.ConsumerGroups[st]
		gauge(consumerGroupCountDesc, s.ConsumerGroups[st], st)
	}
	gauge(groupCountDesc, classic, "classic")
	gauge(groupCountDesc, consumer, "consumer")
	gauge(numGroupsDesc, classic)
	gauge(numOffsetsDesc, s.Offsets)
	for _, c := range []struct {
		d *prometheus.Desc
		v int64
	}{
		{classicRebalancesDesc, s.Counters.ClassicRebalances},
		{consumerRebalancesDesc, s.Counters.ConsumerRebalances},
		{offsetCommitsDesc, s.Counters.OffsetCommits},
		{offsetExpirationsDesc, s.Counters.OffsetExpirations},
		{offsetDeletionsDesc, s.Counters.OffsetDeletions},
	} {
		ch <- prometheus.MustNewConstMetric(c.d, prometheus.CounterValue, float64(c.v))
	}
}

// collectLag emits a group's members, committed offsets and lag.
func collectLag(ch chan<- prometheus.Metric, g group.GroupOffsets, hws map[kafka.TopicPartition]int64) {
	ch <- prometheus.MustNewConstMetric(membersDesc, prometheus.GaugeValue, float64(g.Members), g.GroupID)
	type topicSum struct {
		lag      int64
		complete bool
	}
	sums := map[string]*topicSum{}
	for _, o := range g.Offsets {
		tp := o.Partition
		part := strconv.Itoa(int(tp.Partition))
		ch <- prometheus.MustNewConstMetric(currentOffsetDesc, prometheus.GaugeValue, float64(o.Offset), g.GroupID, tp.Topic, part)
		sum := sums[tp.Topic]
		if sum == nil {
			sum = &topicSum{complete: true}
			sums[tp.Topic] = sum
		}
		hw, ok := hws[tp]
		if !ok || o.Offset < 0 {
			sum.complete = false
			continue
		}
		lag := max(hw-o.Offset, 0)
		sum.lag += lag
		ch <- prometheus.MustNewConstMetric(lagDesc, prometheus.GaugeValue, float64(lag), g.GroupID, tp.Topic, part)
	}
	for topic, sum := range sums {
		if sum.complete {
			ch <- prometheus.MustNewConstMetric(lagSumDesc, prometheus.GaugeValue, float64(sum.lag), g.GroupID, topic)
		}
	}
}
