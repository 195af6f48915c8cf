package quorum

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-io/sluice/internal/clock"
)

// The raft-metrics group as the JMX exporter renders it. Kafka registers
// it on every node that runs a raft client: voters and the brokers'
// observers alike.
var (
	raftCurrentLeaderDesc = raftDesc("current_leader", "The current quorum leader's id; -1 when unknown.", nil)
	raftCurrentEpochDesc  = raftDesc("current_epoch", "The current quorum epoch (the Raft term).", nil)
	raftCurrentVoteDesc   = raftDesc("current_vote", "The voter this node voted for in the current epoch while no leader is known (itself as leader or candidate); -1 otherwise.", nil)
	raftHighWatermarkDesc = raftDesc("high_watermark", "The metadata log's high watermark as this node knows it (DescribeQuorum's).", nil)
	raftLogEndOffsetDesc  = raftDesc("log_end_offset", "The offset after the last entry of this node's metadata log.", nil)
	raftLogEndEpochDesc   = raftDesc("log_end_epoch", "The epoch of the last entry of this node's metadata log.", nil)
	raftCommitAvgDesc     = raftDesc("commit_latency_avg", "Average time in ms from proposing an entry to its commit, over the last 30 to 60 s (NaN: none).", nil)
	raftCommitMaxDesc     = raftDesc("commit_latency_max", "Longest time in ms from proposing an entry to its commit, over the last 30 to 60 s (NaN: none).", nil)
	raftElectionAvgDesc   = raftDesc("election_latency_avg", "Average time in ms from standing for election to a known leader, over the last 30 to 60 s (NaN: none).", nil)
	raftElectionMaxDesc   = raftDesc("election_latency_max", "Longest time in ms from standing for election to a known leader, over the last 30 to 60 s (NaN: none).", nil)
	raftUnknownVotersDesc = raftDesc("number_unknown_voter_connections", "Voters whose connection information is unknown: 0, the voters are static.", nil)
	raftCurrentStateDesc  = raftDesc("current_state", "1 for this node's state in the quorum (leader, candidate, voted, follower, unattached, observer).", []string{"current_state"})
)

func raftDesc(name, help string, labels []string) *prometheus.Desc {
	return prometheus.NewDesc("kafka_server_raftmetrics_"+name, help, labels, nil)
}

// metricsCollector computes the raft-metrics from the view's status when
// scraped.
type metricsCollector struct {
	view      View
	latencies *RaftLatencies
	clk       clock.Clock
}

// NewMetricsCollector returns the raft-metrics of a node following the
// quorum through view. latencies is nil on an observer, which records
// none: its latencies are NaN, as a Kafka observer's are.
func NewMetricsCollector(view View, latencies *RaftLatencies, clk clock.Clock) prometheus.Collector {
	if latencies == nil {
		latencies = &RaftLatencies{}
	}
	return metricsCollector{view: view, latencies: latencies, clk: clk}
}

func (metricsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{raftCurrentLeaderDesc, raftCurrentEpochDesc, raftCurrentVoteDesc, raftHighWatermarkDesc,
		raftLogEndOffsetDesc, raftLogEndEpochDesc, raftCommitAvgDesc, raftCommitMaxDesc, raftElectionAvgDesc, raftElectionMaxDesc,
		raftUnknownVotersDesc, raftCurrentStateDesc} {
		ch <- d
	}
}

func (m metricsCollector) Collect(ch chan<- prometheus.Metric) {
	st := m.view.Status()
	lat := m.latencies.Measure(m.clk.Now())
	for _, g := range []struct {
		desc *prometheus.Desc
		v    float64
	}{
		{raftCurrentLeaderDesc, float64(st.Leader)},
		{raftCurrentEpochDesc, float64(st.Epoch)},
		{raftCurrentVoteDesc, float64(st.Vote)},
		{raftHighWatermarkDesc, float64(st.CommitOffset + 1)},
		{raftLogEndOffsetDesc, float64(st.LogEndOffset)},
		{raftLogEndEpochDesc, float64(st.LogEndEpoch)},
		{raftCommitAvgDesc, lat.CommitAvg},
		{raftCommitMaxDesc, lat.CommitMax},
		{raftElectionAvgDesc, lat.ElectionAvg},
		{raftElectionMaxDesc, lat.ElectionMax},
		{raftUnknownVotersDesc, 0},
	} {
		ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, g.v)
	}
	ch <- prometheus.MustNewConstMetric(raftCurrentStateDesc, prometheus.GaugeValue, 1, st.State)
}
