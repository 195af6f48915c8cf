package web

import (
	"context"
	"fmt"
	"html/template"
	"net/http"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// pageTimeout bounds the Kafka requests one page makes.
const pageTimeout = 15 * time.Second

// maxLagChartGroups is how many groups (the most lagging) the lag chart draws.
const maxLagChartGroups = 6

type overviewData struct {
	ClusterID string
	// Controller is the active controller, the quorum's leader (Metadata's
	// controller id is any live broker in KRaft, KIP-590); -1 when the
	// quorum could not be described.
	Controller int32
	Version    string
	Brokers    []kadm.BrokerDetail
	Topics     int
	Partitions int
	Quorum     quorumView
	Features   []featureView
	// FeaturesError is why the finalized features are not shown.
	FeaturesError string
	Throughput    template.HTML
	Messages      template.HTML
	Lag           template.HTML
	LagNote       string
}

type quorumView struct {
	Error         string
	LeaderID      int32
	LeaderEpoch   int32
	HighWatermark int64
	Voters        []replicaView
	Observers     []replicaView
}

// replicaView is a voter or observer of the metadata log; Lag is the
// leader's log end offset minus this replica's, as kafka-metadata-quorum
// prints it.
type replicaView struct {
	ID           int32
	LogEndOffset int64
	Lag          int64
	LastCaughtUp string
}

type featureView struct {
	Name     string
	MinLevel int16
	MaxLevel int16
}

// overviewPage is the cluster at a glance.
func (c *Console) overviewPage(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx, cancel := context.WithTimeout(r.Context(), pageTimeout)
	defer cancel()
	md, err := s.Admin().Metadata(ctx)
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	d := overviewData{ClusterID: md.Cluster, Controller: -1, Version: c.opts.Version,
		Brokers: md.Brokers, Topics: len(md.Topics)}
	sort.Slice(d.Brokers, func(i, j int) bool { return d.Brokers[i].NodeID < d.Brokers[j].NodeID })
	for _, t := range md.Topics {
		d.Partitions += len(t.Partitions)
	}
	d.Quorum = describeQuorum(ctx, s.Client())
	if d.Quorum.Error == "" {
		d.Controller = d.Quorum.LeaderID
	}
	d.Features, err = finalizedFeatures(ctx, s.Client())
	if err != nil {
		d.FeaturesError = err.Error()
	}
	c.overviewCharts(&d)
	c.render(w, s, http.StatusOK, "overview.html", "Overview", d)
	return nil
}

// activeController is the quorum's leader, or -1 when DescribeQuorum
// fails (not authorized, no leader).
func activeController(ctx context.Context, cl *kgo.Client) int32 {
	if q := describeQuorum(ctx, cl); q.Error == "" {
		return q.LeaderID
	}
	return -1
}

// describeQuorum asks for the metadata quorum's state (DescribeQuorum on
// __cluster_metadata-0, forwarded by a broker to the active controller).
func describeQuorum(ctx context.Context, cl *kgo.Client) quorumView {
	req := kmsg.NewPtrDescribeQuorumRequest()
	t := kmsg.NewDescribeQuorumRequestTopic()
	t.Topic = "__cluster_metadata"
	t.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{{Partition: 0}}
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err == nil && (len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1) {
		err = fmt.Errorf("answer without the metadata partition")
	}
	if err == nil {
		err = kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
	}
	if err != nil {
		return quorumView{Error: "DescribeQuorum: " + err.Error()}
	}
	p := resp.Topics[0].Partitions[0]
	q := quorumView{LeaderID: p.LeaderID, LeaderEpoch: p.LeaderEpoch, HighWatermark: p.HighWatermark}
	leaderEnd := p.HighWatermark
	for _, v := range p.CurrentVoters {
		if v.ReplicaID == p.LeaderID {
			leaderEnd = v.LogEndOffset
		}
	}
	q.Voters = replicaViews(p.CurrentVoters, leaderEnd)
	q.Observers = replicaViews(p.Observers, leaderEnd)
	return q
}

func replicaViews(rs []kmsg.DescribeQuorumResponseTopicPartitionReplicaState, leaderEnd int64) []replicaView {
	out := make([]replicaView, 0, len(rs))
	for _, r := range rs {
		v := replicaView{ID: r.ReplicaID, LogEndOffset: r.LogEndOffset, Lag: leaderEnd - r.LogEndOffset, LastCaughtUp: "-"}
		if r.LastCaughtUpTimestamp >= 0 {
			v.LastCaughtUp = time.UnixMilli(r.LastCaughtUpTimestamp).UTC().Format("15:04:05Z")
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// finalizedFeatures are the cluster's finalized feature levels, from
// ApiVersions (v3+), as kafka-features describe shows them.
func finalizedFeatures(ctx context.Context, cl *kgo.Client) ([]featureView, error) {
	req := kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName, req.ClientSoftwareVersion = "sluice-console", "1"
	resp, err := req.RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil {
		return nil, fmt.Errorf("ApiVersions: %w", err)
	}
	out := make([]featureView, 0, len(resp.FinalizedFeatures))
	for _, f := range resp.FinalizedFeatures {
		out = append(out, featureView{Name: f.Name, MinLevel: f.MinVersionLevel, MaxLevel: f.MaxVersionLevel})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// overviewCharts draws this node's throughput and the lag of the groups it
// coordinates from the metrics history.
func (c *Console) overviewCharts(d *overviewData) {
	ss := c.history.samples()
	d.Throughput = chart("throughput-chart", []series{
		{name: "bytes in", points: rates(ss, func(s sample) float64 { return s.bytesIn })},
		{name: "bytes out", points: rates(ss, func(s sample) float64 { return s.bytesOut })},
	}, func(v float64) string { return humanBytes(int64(v)) + "/s" })
	d.Messages = chart("messages-chart", []series{
		{name: "messages in", points: rates(ss, func(s sample) float64 { return s.messages })},
	}, humanRate)
	groups, bySeries := lagSeries(ss)
	latest := func(g string) float64 { p := bySeries[g]; return p[len(p)-1].v }
	sort.SliceStable(groups, func(i, j int) bool { return latest(groups[i]) > latest(groups[j]) })
	if len(groups) > maxLagChartGroups {
		d.LagNote = fmt.Sprintf("The %d most lagging of %d groups.", maxLagChartGroups, len(groups))
		groups = groups[:maxLagChartGroups]
	}
	lines := make([]series, len(groups))
	for i, g := range groups {
		lines[i] = series{name: g, points: bySeries[g]}
	}
	d.Lag = chart("lag-chart", lines, func(v float64) string { return fmt.Sprintf("%.0f", v) })
}
