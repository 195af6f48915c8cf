package sluicetest

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// CreateTopic creates topic with partitions partitions and replication
// factor rf (-1 for default.replication.factor) and waits until every
// running node names a leader for each partition.
func (c *Cluster) CreateTopic(ctx context.Context, topic string, partitions int32, rf int16) error {
	cl, err := c.Client()
	if err != nil {
		return err
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, rf, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("sluicetest: create topic %s: %w", topic, err)
	}
	return c.waitLeaders(ctx, cl, topic)
}

// WaitLeaders waits until every running node's metadata names a leader
// for each partition of topic, so a produce to any of them finds one.
func (c *Cluster) WaitLeaders(ctx context.Context, topic string) error {
	cl, err := c.Client()
	if err != nil {
		return err
	}
	defer cl.Close()
	return c.waitLeaders(ctx, cl, topic)
}

func (c *Cluster) waitLeaders(ctx context.Context, cl *kgo.Client, topic string) error {
	backoff := time.Millisecond
	for {
		missing, err := c.leaderless(ctx, cl, topic)
		if err == nil && missing == "" {
			return nil
		}
		if err == nil {
			err = fmt.Errorf("%s", missing)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("sluicetest: leaders of %s: %w (last: %v)", topic, ctx.Err(), err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 50*time.Millisecond)
	}
}

// leaderless names what a running node's metadata lacks for topic, or ""
// when every running node knows a leader of every partition.
func (c *Cluster) leaderless(ctx context.Context, cl *kgo.Client, topic string) (string, error) {
	for _, m := range c.nodes {
		if m.running() == nil {
			continue
		}
		req := kmsg.NewPtrMetadataRequest()
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, t)
		resp, err := req.RequestWith(ctx, cl.Broker(int(m.id)))
		if err != nil {
			return "", fmt.Errorf("node %d: %w", m.id, err)
		}
		if len(resp.Topics) != 1 {
			return fmt.Sprintf("node %d: no topic in metadata", m.id), nil
		}
		rt := resp.Topics[0]
		if err := kerr.ErrorForCode(rt.ErrorCode); err != nil {
			return fmt.Sprintf("node %d: %v", m.id, err), nil
		}
		if len(rt.Partitions) == 0 {
			return fmt.Sprintf("node %d: no partitions", m.id), nil
		}
		for _, p := range rt.Partitions {
			if p.Leader < 0 || kerr.ErrorForCode(p.ErrorCode) != nil {
				return fmt.Sprintf("node %d: partition %d has no leader", m.id, p.Partition), nil
			}
		}
	}
	return "", nil
}

// Leader is the node leading partition of topic, as the cluster's metadata
// names it now (-1 when it has none).
func (c *Cluster) Leader(ctx context.Context, topic string, partition int32) (int32, error) {
	cl, err := c.Client()
	if err != nil {
		return -1, err
	}
	defer cl.Close()
	md, err := kadm.NewClient(cl).Metadata(ctx, topic)
	if err != nil {
		return -1, fmt.Errorf("sluicetest: metadata of %s: %w", topic, err)
	}
	p, ok := md.Topics[topic].Partitions[partition]
	if !ok {
		return -1, fmt.Errorf("sluicetest: no partition %d of %s", partition, topic)
	}
	return p.Leader, nil
}
