package web

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

type partitionRow struct {
	Partition   int32
	Leader      int32
	LeaderEpoch int32
	Replicas    []int32
	ISR         []int32
	Offline     []int32
	StartOffset int64
	EndOffset   int64
	Error       string
}

type configRow struct {
	Name      string
	Value     string
	Sensitive bool
	Source    string
	// Dynamic is set for a value set on the topic itself (deletable).
	Dynamic bool
}

type topicData struct {
	Topic string
	// ID is the topic id as Kafka prints it (URL-safe base64, no padding).
	ID         string
	Internal   bool
	Partitions []partitionRow
	Configs    []configRow
	// OffsetsError and ConfigsError say why a part is missing.
	OffsetsError, ConfigsError string
	Created, Altered           bool
	// Rates are this node's rates of the topic; HasRate is false before
	// two samples of it.
	BytesIn, BytesOut, MessagesIn float64
	HasRate                       bool
}

// topicPage shows a topic's partitions (leader, replicas, ISR, offsets)
// and configs with the forms that change them.
func (c *Console) topicPage(w http.ResponseWriter, r *http.Request, s *session) error {
	topic := r.PathValue("topic")
	ctx, cancel := context.WithTimeout(r.Context(), pageTimeout)
	defer cancel()
	adm := s.Admin()
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	t, ok := md.Topics[topic]
	if !ok || errors.Is(t.Err, kerr.UnknownTopicOrPartition) {
		return userError(http.StatusNotFound, "There is no topic %q.", clipInput(topic))
	}
	if t.Err != nil {
		return fmt.Errorf("topic %s: %w", topic, t.Err)
	}
	q := r.URL.Query()
	d := topicData{Topic: topic, ID: base64.RawURLEncoding.EncodeToString(t.ID[:]), Internal: t.IsInternal, Created: q.Has("created"), Altered: q.Has("altered")}
	if rt, ok := c.topicRates.rate(topic); ok {
		d.BytesIn, d.BytesOut, d.MessagesIn, d.HasRate = rt.bytesIn, rt.bytesOut, rt.messages, true
	}
	d.Partitions, d.OffsetsError = partitionRows(ctx, adm, t)
	d.Configs, err = topicConfigs(ctx, adm, topic)
	if err != nil {
		d.ConfigsError = "DescribeConfigs: " + err.Error()
	}
	c.render(w, s, http.StatusOK, "topic.html", "Topic "+topic, d)
	return nil
}

// partitionRows joins metadata with the start and end offsets.
func partitionRows(ctx context.Context, adm *kadm.Client, t kadm.TopicDetail) ([]partitionRow, string) {
	var msg string
	starts, err := adm.ListStartOffsets(ctx, t.Topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		msg = "ListOffsets (earliest): " + err.Error()
	}
	ends, err := adm.ListEndOffsets(ctx, t.Topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil && msg == "" {
		msg = "ListOffsets (latest): " + err.Error()
	}
	rows := make([]partitionRow, 0, len(t.Partitions))
	for _, p := range sortedPartitions(t) {
		row := partitionRow{Partition: p.Partition, Leader: p.Leader, LeaderEpoch: p.LeaderEpoch,
			Replicas: p.Replicas, ISR: p.ISR, Offline: p.OfflineReplicas, StartOffset: -1, EndOffset: -1}
		if p.Err != nil {
			row.Error = p.Err.Error()
		}
		if o, ok := starts.Lookup(t.Topic, p.Partition); ok && o.Err == nil {
			row.StartOffset = o.Offset
		}
		if o, ok := ends.Lookup(t.Topic, p.Partition); ok && o.Err == nil {
			row.EndOffset = o.Offset
		}
		rows = append(rows, row)
	}
	return rows, msg
}

// topicConfigs describes a topic's configs, sorted by name.
func topicConfigs(ctx context.Context, adm *kadm.Client, topic string) ([]configRow, error) {
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		return nil, err
	}
	rc, err := rcs.On(topic, nil)
	if err != nil {
		return nil, err
	}
	if rc.Err != nil {
		return nil, kafkaRefused("describe the configs of "+topic, rc.Err, rc.ErrMessage)
	}
	return configRows(rc.Configs), nil
}

func configRows(cs []kadm.Config) []configRow {
	rows := make([]configRow, 0, len(cs))
	for _, cf := range cs {
		row := configRow{Name: cf.Key, Value: cf.MaybeValue(), Sensitive: cf.Sensitive, Source: cf.Source.String()}
		row.Dynamic = cf.Source.String() == "DYNAMIC_TOPIC_CONFIG"
		if cf.Sensitive {
			row.Value = "(sensitive)"
		}
		rows = append(rows, row)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	return rows
}

// alterTopicConfigs applies the form's sets and resets with
// IncrementalAlterConfigs; Kafka's validation message is shown verbatim.
func (c *Console) alterTopicConfigs(w http.ResponseWriter, r *http.Request, s *session) error {
	topic := r.PathValue("topic")
	set, err := parseConfigLines(r.PostForm.Get("set"))
	if err != nil {
		return err
	}
	del, err := parseDeleteKeys(r.PostForm.Get("delete"))
	if err != nil {
		return err
	}
	var alters []kadm.AlterConfig
	for k, v := range set {
		alters = append(alters, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: v})
	}
	for _, k := range del {
		alters = append(alters, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k})
	}
	if len(alters) == 0 {
		return badRequest("Nothing to change: give key=value lines to set or names to reset.")
	}
	ctx, cancel := context.WithTimeout(r.Context(), pageTimeout)
	defer cancel()
	resps, err := s.Admin().AlterTopicConfigs(ctx, alters, topic)
	if err != nil {
		return fmt.Errorf("IncrementalAlterConfigs: %w", err)
	}
	for _, resp := range resps {
		if resp.Err != nil {
			return kafkaRefused("alter the configs of topic "+topic, resp.Err, resp.ErrMessage)
		}
	}
	c.log.Info("web console: topic configs altered", "topic", topic, "set", len(set), "reset", len(del), "user", s.user)
	http.Redirect(w, r, "/topics/"+url.PathEscape(topic)+"?altered=1#configs", http.StatusSeeOther)
	return nil
}
