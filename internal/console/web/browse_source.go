package web

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The direct consumer's fetch bounds: one fetch holds at most this much
// of the partition, so a page's memory is bounded whatever the topic holds
// (Kafka still returns a first batch larger than this whole).
const (
	fetchMaxBytes = 1 << 20
	fetchMaxWait  = 250 * time.Millisecond
)

// partitionSource is a direct consumer of one partition (no group): a
// client of its own built from the session's options, closed after the page.
type partitionSource struct {
	cl        *kgo.Client
	topic     string
	partition int32
}

// openPartition starts consuming topic/partition at offset with the
// session client's connection settings (brokers, TLS, SASL). An offset that
// falls out of range while reading is an error, never a silent reset.
func openPartition(base *kgo.Client, topic string, partition int32, offset int64) (*partitionSource, error) {
	opts := append(base.Opts(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {partition: kgo.NewOffset().At(offset)}}),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()),
		kgo.FetchMaxBytes(fetchMaxBytes),
		kgo.FetchMaxPartitionBytes(fetchMaxBytes),
		kgo.FetchMaxWait(fetchMaxWait),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()),
		// Transaction markers take offsets too: seeing them lets a scan
		// pass a range that ends in one instead of waiting it out.
		kgo.KeepControlRecords(),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("consumer of %s-%d: %w", topic, partition, err)
	}
	return &partitionSource{cl: cl, topic: topic, partition: partition}, nil
}

// Poll returns the records fetched so far, waiting for some until ctx ends.
func (s *partitionSource) Poll(ctx context.Context, max int) ([]*kgo.Record, error) {
	fs := s.cl.PollRecords(ctx, max)
	var ferr error
	fs.EachError(func(topic string, p int32, err error) {
		if ferr == nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			ferr = fmt.Errorf("reading %s-%d: %w", s.topic, s.partition, err)
		}
	})
	recs := fs.Records()
	switch {
	case len(recs) > 0:
		return recs, nil
	case ferr != nil:
		return nil, ferr
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	return nil, nil
}

// SeekTo moves the consumer to offset; records fetched before the seek may
// still arrive and are the caller's to skip.
func (s *partitionSource) SeekTo(offset int64) {
	s.cl.SetOffsets(map[string]map[int32]kgo.EpochOffset{s.topic: {s.partition: {Epoch: -1, Offset: offset}}})
}

// Close stops fetching and closes the connections.
func (s *partitionSource) Close() { s.cl.Close() }
