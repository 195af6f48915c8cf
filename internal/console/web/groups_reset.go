package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

// resetTarget is where an offset reset moves a group, as Kafka's
// kafka-consumer-groups --reset-offsets options name them.
type resetTarget string

const (
	resetEarliest  resetTarget = "earliest"  // --to-earliest
	resetLatest    resetTarget = "latest"    // --to-latest
	resetTimestamp resetTarget = "timestamp" // --to-datetime
	resetOffset    resetTarget = "offset"    // --to-offset
	resetShift     resetTarget = "shift"     // --shift-by
)

// resetSpec is a parsed reset form: the target, its value and the topic
// ("" is every topic the group has committed offsets for, --all-topics).
type resetSpec struct {
	Target resetTarget
	Value  int64 // the offset, the shift or the timestamp in ms
	Topic  string
}

// parseResetSpec reads target, value and topic from a form or a query.
func parseResetSpec(v url.Values) (resetSpec, error) {
	s := resetSpec{Target: resetTarget(v.Get("target")), Topic: strings.TrimSpace(v.Get("topic"))}
	raw := strings.TrimSpace(v.Get("value"))
	var err error
	switch s.Target {
	case resetEarliest, resetLatest:
		return s, nil
	case resetTimestamp:
		s.Value, err = parseTimestamp(raw)
		if err != nil {
			return s, badRequest("%s", err.Error())
		}
		return s, nil
	case resetOffset, resetShift:
		s.Value, err = strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return s, badRequest("The %s must be a whole number, not %q.", s.Target, clip(raw))
		}
		if s.Target == resetOffset && s.Value < 0 {
			return s, badRequest("Offset %d is negative.", s.Value)
		}
		return s, nil
	default:
		return s, badRequest("Choose where to reset to: earliest, latest, timestamp, offset or shift (not %q).", clip(string(s.Target)))
	}
}

// values renders the spec back into a form's fields.
func (s resetSpec) values() url.Values {
	v := url.Values{"target": {string(s.Target)}, "topic": {s.Topic}}
	if s.Target != resetEarliest && s.Target != resetLatest {
		v.Set("value", strconv.FormatInt(s.Value, 10))
	}
	return v
}

// resetRow is one partition of a reset plan.
type resetRow struct {
	Topic     string
	Partition int32
	Current   int64 // -1: no committed offset
	New       int64 // -1: cannot be computed (Note says why)
	Note      string
}

// planReset computes the new offset of every partition the spec covers:
// a topic's partitions, or those the group committed to. Offsets are held
// to the partition's [log start, end] range, as Kafka's tool does.
func planReset(ctx context.Context, adm *kadm.Client, group string, s resetSpec) ([]resetRow, error) {
	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		return nil, fmt.Errorf("fetching committed offsets of %s: %w", group, err)
	}
	rows, topics, err := resetScope(ctx, adm, committed, s.Topic)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err != nil && len(starts) == 0 {
		return nil, fmt.Errorf("listing start offsets: %w", err)
	}
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil && len(ends) == 0 {
		return nil, fmt.Errorf("listing end offsets: %w", err)
	}
	var byTime kadm.ListedOffsets
	if s.Target == resetTimestamp {
		if byTime, err = adm.ListOffsetsAfterMilli(ctx, s.Value, topics...); err != nil && len(byTime) == 0 {
			return nil, fmt.Errorf("listing offsets by time: %w", err)
		}
	}
	for i := range rows {
		rows[i].plan(s, starts, ends, byTime)
	}
	return rows, nil
}

// resetScope lists the partitions a reset covers with their committed
// offsets, and their topics.
func resetScope(ctx context.Context, adm *kadm.Client, committed kadm.OffsetResponses, topic string) ([]resetRow, []string, error) {
	current := func(t string, p int32) int64 {
		if o, ok := committed.Lookup(t, p); ok && o.Err == nil {
			return o.At
		}
		return -1
	}
	var rows []resetRow
	if topic == "" {
		committed.Each(func(o kadm.OffsetResponse) {
			rows = append(rows, resetRow{Topic: o.Topic, Partition: o.Partition, Current: current(o.Topic, o.Partition)})
		})
	} else {
		tds, err := adm.ListTopics(ctx, topic)
		if err != nil {
			return nil, nil, fmt.Errorf("metadata of %s: %w", topic, err)
		}
		td, ok := tds[topic]
		if !ok || td.Err != nil {
			return nil, nil, userError(http.StatusNotFound, "Topic %q does not exist.", clip(topic))
		}
		for p := range td.Partitions {
			rows = append(rows, resetRow{Topic: topic, Partition: p, Current: current(topic, p)})
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		return rows[i].Topic < rows[j].Topic || rows[i].Topic == rows[j].Topic && rows[i].Partition < rows[j].Partition
	})
	var topics []string
	for i, r := range rows {
		if i == 0 || rows[i-1].Topic != r.Topic {
			topics = append(topics, r.Topic)
		}
	}
	return rows, topics, nil
}

// plan sets r.New for s from the listed offsets.
func (r *resetRow) plan(s resetSpec, starts, ends, byTime kadm.ListedOffsets) {
	r.New = -1
	st, ok1 := starts.Lookup(r.Topic, r.Partition)
	en, ok2 := ends.Lookup(r.Topic, r.Partition)
	if !ok1 || !ok2 || st.Err != nil || en.Err != nil {
		r.Note = "the partition's offsets could not be listed"
		return
	}
	var want int64
	switch s.Target {
	case resetEarliest:
		want = st.Offset
	case resetLatest:
		want = en.Offset
	case resetOffset:
		want = s.Value
	case resetShift:
		if r.Current < 0 {
			r.Note = "no committed offset to shift"
			return
		}
		want = r.Current + s.Value
	case resetTimestamp:
		bt, ok := byTime.Lookup(r.Topic, r.Partition)
		if !ok || bt.Err != nil {
			r.Note = "the offset for the time could not be listed"
			return
		}
		want = bt.Offset
	}
	r.New = min(max(want, st.Offset), en.Offset)
	if r.New != want {
		r.Note = fmt.Sprintf("%d is outside the partition's offsets %d to %d: held to %d", want, st.Offset, en.Offset, r.New)
	}
}

// applyReset commits the plan's new offsets for the group (an admin
// commit: no member, generation -1). The broker takes it only while the
// group has no members; its answer is returned per partition.
func applyReset(ctx context.Context, adm *kadm.Client, group string, rows []resetRow) (kadm.OffsetResponses, error) {
	os := make(kadm.Offsets)
	for _, r := range rows {
		if r.New >= 0 {
			os.Add(kadm.Offset{Topic: r.Topic, Partition: r.Partition, At: r.New, LeaderEpoch: -1})
		}
	}
	if len(os) == 0 {
		return nil, badRequest("Nothing to reset: no partition has a new offset.")
	}
	resps, err := adm.CommitOffsets(ctx, group, os)
	if err != nil {
		return nil, fmt.Errorf("committing offsets of %s: %w", group, err)
	}
	return resps, nil
}
