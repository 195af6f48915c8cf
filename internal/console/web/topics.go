package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

type topicRow struct {
	Name        string
	Internal    bool
	Partitions  int
	Replication int
	// UnderReplicated counts partitions whose ISR is smaller than their replicas.
	UnderReplicated int
	// Size is the bytes of all replicas' logs; -1 when unknown.
	Size int64
	// BytesIn, BytesOut and MessagesIn are this node's rates; HasRate is
	// false before two samples of the topic.
	BytesIn, BytesOut, MessagesIn float64
	HasRate                       bool
	Error                         string
}

// maxListedTopics bounds the rows of the topics list; a filter narrows it.
const maxListedTopics = 1000

type topicsData struct {
	Topics []topicRow
	// Filter is the name substring asked for; Total the topics matching
	// it, of which the first maxListedTopics are listed.
	Filter string
	Total  int
	// SizeError says why sizes are missing (DescribeLogDirs refused).
	SizeError string
	// Deleted names the topic a delete just removed.
	Deleted string
}

// topicsPage lists the topics with partitions, size and throughput, and
// the create form.
func (c *Console) topicsPage(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx, cancel := context.WithTimeout(r.Context(), pageTimeout)
	defer cancel()
	topics, err := s.Admin().ListTopicsWithInternal(ctx)
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	sizes, sizeErr := topicSizes(ctx, s.Admin())
	d := topicsData{Deleted: r.URL.Query().Get("deleted"), Filter: strings.TrimSpace(r.URL.Query().Get("q"))}
	if sizeErr != nil {
		d.SizeError = "DescribeLogDirs: " + sizeErr.Error()
	}
	for _, t := range topics.Sorted() {
		if !strings.Contains(t.Topic, d.Filter) {
			continue
		}
		if d.Total++; len(d.Topics) >= maxListedTopics {
			continue
		}
		row := topicRow{Name: t.Topic, Internal: t.IsInternal, Partitions: len(t.Partitions), Size: -1}
		if t.Err != nil {
			row.Error = t.Err.Error()
		}
		for _, p := range t.Partitions {
			row.Replication = max(row.Replication, len(p.Replicas))
			if len(p.ISR) < len(p.Replicas) {
				row.UnderReplicated++
			}
		}
		if sz, ok := sizes[t.Topic]; ok {
			row.Size = sz
		}
		if rt, ok := c.topicRates.rate(t.Topic); ok {
			row.BytesIn, row.BytesOut, row.MessagesIn, row.HasRate = rt.bytesIn, rt.bytesOut, rt.messages, true
		}
		d.Topics = append(d.Topics, row)
	}
	c.render(w, s, http.StatusOK, "topics.html", "Topics", d)
	return nil
}

// topicSizes sums each topic's replica sizes over every broker's log dirs.
func topicSizes(ctx context.Context, adm *kadm.Client) (map[string]int64, error) {
	all, err := adm.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64)
	var first error
	all.Each(func(d kadm.DescribedLogDir) {
		if d.Err != nil && first == nil {
			first = fmt.Errorf("broker %d, %s: %w", d.Broker, d.Dir, d.Err)
		}
		d.Topics.Each(func(p kadm.DescribedLogDirPartition) { out[p.Topic] += p.Size })
	})
	return out, first
}

// createTopic creates a topic from the form; Kafka's refusal is shown as
// Kafka words it.
func (c *Console) createTopic(w http.ResponseWriter, r *http.Request, s *session) error {
	spec, err := parseTopicForm(r.PostForm)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.Context(), pageTimeout)
	defer cancel()
	resps, err := s.Admin().CreateTopics(ctx, spec.partitions, spec.replication, spec.configs, spec.name)
	if err != nil {
		return fmt.Errorf("CreateTopics: %w", err)
	}
	resp, ok := resps[spec.name]
	if !ok {
		return fmt.Errorf("CreateTopics: no answer for topic %q", spec.name)
	}
	if resp.Err != nil {
		return kafkaRefused("create topic "+spec.name, resp.Err, resp.ErrMessage)
	}
	c.log.Info("web console: topic created", "topic", spec.name, "user", s.user)
	c.awaitTopic(ctx, s.Admin(), spec.name, true)
	http.Redirect(w, r, "/topics/"+url.PathEscape(spec.name)+"?created=1", http.StatusSeeOther)
	return nil
}

type deleteData struct{ Topic string }

// deleteTopicPage asks to confirm a deletion by typing the topic's name.
func (c *Console) deleteTopicPage(w http.ResponseWriter, r *http.Request, s *session) error {
	c.render(w, s, http.StatusOK, "topic_delete.html", "Delete topic "+r.PathValue("topic"), deleteData{Topic: r.PathValue("topic")})
	return nil
}

// deleteTopic deletes a topic once its name was typed in the confirm step.
func (c *Console) deleteTopic(w http.ResponseWriter, r *http.Request, s *session) error {
	topic := r.PathValue("topic")
	if r.PostForm.Get("confirm") != topic {
		return badRequest("To delete topic %q, type its name exactly in the confirmation field.", clipInput(topic))
	}
	ctx, cancel := context.WithTimeout(r.Context(), pageTimeout)
	defer cancel()
	resps, err := s.Admin().DeleteTopics(ctx, topic)
	if err != nil {
		return fmt.Errorf("DeleteTopics: %w", err)
	}
	resp, ok := resps[topic]
	if !ok {
		return fmt.Errorf("DeleteTopics: no answer for topic %q", topic)
	}
	if resp.Err != nil {
		return kafkaRefused("delete topic "+topic, resp.Err, resp.ErrMessage)
	}
	c.log.Info("web console: topic deleted", "topic", topic, "user", s.user)
	c.awaitTopic(ctx, s.Admin(), topic, false)
	http.Redirect(w, r, "/topics?deleted="+url.QueryEscape(topic), http.StatusSeeOther)
	return nil
}

// awaitTopic waits (within ctx) until the metadata of the node shows the
// topic created or gone: the controller answered once the change was
// committed, and the broker applies it a moment later, so the next page
// would otherwise not show it yet.
func (c *Console) awaitTopic(ctx context.Context, adm *kadm.Client, topic string, exists bool) {
	for {
		md, err := adm.Metadata(ctx, topic)
		if err == nil {
			t, ok := md.Topics[topic]
			if (ok && t.Err == nil) == exists {
				return
			}
		}
		timer := c.clock.NewTimer(100 * time.Millisecond)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C():
		}
	}
}

// kafkaRefused is the page for an error code Kafka answered: its error
// name and its own message, verbatim. Kafka refused the input, so 400.
func kafkaRefused(what string, err error, msg string) error {
	text := fmt.Sprintf("Kafka refused to %s: %v", what, err)
	if msg != "" {
		text += ": " + msg
	}
	return userError(http.StatusBadRequest, "%s", text)
}

// sortedPartitions orders a topic's partitions by number.
func sortedPartitions(t kadm.TopicDetail) []kadm.PartitionDetail {
	ps := make([]kadm.PartitionDetail, 0, len(t.Partitions))
	for _, p := range t.Partitions {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Partition < ps[j].Partition })
	return ps
}
