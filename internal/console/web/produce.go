package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Bounds of a produced message (the form itself is bounded by maxFormBytes).
const (
	maxProduceHeaders = 64
	produceTimeout    = 15 * time.Second
)

// produceForm is a parsed produce form.
type produceForm struct {
	Topic     string
	Partition int32 // -1: the partitioner chooses (by key)
	Key       []byte
	Value     []byte
	Headers   []kgo.RecordHeader
}

// parseProduceForm reads topic, partition (optional), key (empty: null),
// value and headers ("name=value", one a line).
func parseProduceForm(f url.Values) (produceForm, error) {
	p := produceForm{Topic: strings.TrimSpace(f.Get("topic")), Partition: -1}
	if p.Topic == "" {
		return p, badRequest("Choose the topic to produce to.")
	}
	if s := strings.TrimSpace(f.Get("partition")); s != "" {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil || n < 0 {
			return p, badRequest("Partition must be a partition number (0 or more) or empty, not %q.", clip(s))
		}
		p.Partition = int32(n)
	}
	if k := f.Get("key"); k != "" {
		p.Key = []byte(k)
	}
	p.Value = []byte(f.Get("value"))
	for i, line := range strings.Split(f.Get("headers"), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		name, val, ok := strings.Cut(line, "=")
		if !ok || name == "" {
			return p, badRequest("Header line %d is not name=value: %q.", i+1, clip(line))
		}
		if len(p.Headers) == maxProduceHeaders {
			return p, badRequest("More than %d headers.", maxProduceHeaders)
		}
		p.Headers = append(p.Headers, kgo.RecordHeader{Key: name, Value: []byte(val)})
	}
	return p, nil
}

// produced is where a message was written.
type produced struct {
	Topic     string
	Partition int32
	Offset    int64
	Timestamp time.Time
}

// produceOne writes p with a producer of its own (the session's connection
// settings; acks=all; a given partition is used as is) and waits for the
// answer. An unknown topic or partition is refused before producing, with
// the valid range.
func produceOne(ctx context.Context, base *kgo.Client, p produceForm) (produced, error) {
	if err := checkPartition(ctx, base, p.Topic, p.Partition); err != nil {
		return produced{}, err
	}
	partitioner := kgo.StickyKeyPartitioner(nil)
	if p.Partition >= 0 {
		partitioner = kgo.ManualPartitioner()
	}
	cl, err := kgo.NewClient(append(base.Opts(),
		kgo.RecordPartitioner(partitioner),
		kgo.DisableIdempotentWrite(), // one record: WRITE on the topic is all it needs
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordDeliveryTimeout(produceTimeout),
	)...)
	if err != nil {
		return produced{}, fmt.Errorf("producer: %w", err)
	}
	defer cl.Close()
	rec := &kgo.Record{Topic: p.Topic, Partition: p.Partition, Key: p.Key, Value: p.Value, Headers: p.Headers}
	r, err := cl.ProduceSync(ctx, rec).First()
	if err != nil {
		return produced{}, err
	}
	return produced{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Timestamp: r.Timestamp}, nil
}

// checkPartition refuses a topic that does not exist or a partition it
// does not have.
func checkPartition(ctx context.Context, cl *kgo.Client, topic string, partition int32) error {
	tds, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err != nil {
		return fmt.Errorf("metadata of %s: %w", topic, err)
	}
	td, ok := tds[topic]
	switch {
	case !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition):
		return userError(http.StatusNotFound, "Topic %q does not exist.", clip(topic))
	case td.Err != nil:
		return fmt.Errorf("metadata of %s: %w", topic, td.Err)
	case partition >= int32(len(td.Partitions)):
		return badRequest("Partition %d does not exist: topic %q has partitions 0 to %d.", partition, clip(topic), len(td.Partitions)-1)
	}
	return nil
}
