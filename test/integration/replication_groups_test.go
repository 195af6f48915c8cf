package integration

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/testcluster"
	"github.com/sluice-io/sluice/internal/testutil"
)

// TestReplicationGroupSurvivesCoordinatorStop: in a 3-node in-process
// cluster, a topic with RF 3 and __consumer_offsets with RF 3, a consumer
// group commits half the records; the node leading the group's offsets
// partition (its coordinator) stops. The group's committed offsets come
// back from the new leader of that partition, and a new member reads the
// rest: no acknowledged record is skipped and none read twice.
func TestReplicationGroupSurvivesCoordinatorStop(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Nodes: 3, Overrides: map[string]string{
		"broker.session.timeout.ms":        "3000",
		"broker.heartbeat.interval.ms":     "500",
		"replica.lag.time.max.ms":          "2000",
		"min.insync.replicas":              "2",
		"offsets.topic.num.partitions":     "3",
		"group.initial.rebalance.delay.ms": "0",
		"offsets.topic.replication.factor": "3",
	}})
	addrs := c.RunningBrokerAddrs()
	adm := clusterAdmin(t, addrs)
	const topic, total = "replicated-group", 300
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := adm.CreateTopic(ctx, 3, 3, nil, topic)
		if err != nil {
			return err
		}
		if errors.Is(resp.Err, kerr.TopicAlreadyExists) {
			return nil
		}
		return resp.Err
	}, "create topic")
	producer, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	records := make([]*kgo.Record, total)
	for i := range records {
		records[i] = &kgo.Record{Value: []byte(fmt.Sprint(i))}
	}
	if err := producer.ProduceSync(ctx, records...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	producer.Close()

	const group = "replicated-readers"
	seen := make(map[string]int)
	first := consumeAndCommit(t, ctx, addrs, topic, group, total/2)
	for _, v := range first {
		seen[v]++
	}

	coord := adm.FindGroupCoordinators(ctx, group)[group]
	if coord.Err != nil {
		t.Fatalf("find coordinator: %v", coord.Err)
	}
	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil || committed.Error() != nil {
		t.Fatalf("fetch offsets: %v %v", err, committed.Error())
	}
	stopped := int(coord.NodeID) - 1
	t.Logf("stopping node %d, coordinator of %s", coord.NodeID, group)
	c.Stop(stopped)

	survivors := c.RunningBrokerAddrs()
	sadm := clusterAdmin(t, survivors)
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		got, err := sadm.FetchOffsets(ctx, group)
		if err != nil {
			return err
		}
		if err := got.Error(); err != nil {
			return err
		}
		for tp, o := range committed.Offsets() {
			for p, want := range o {
				if g, ok := got.Lookup(tp, p); !ok || g.At != want.At {
					return fmt.Errorf("%s-%d committed %d, new coordinator says %+v", tp, p, want.At, g)
				}
			}
		}
		return nil
	}, "committed offsets from the new coordinator")
	rest := consumeAndCommit(t, ctx, survivors, topic, group, total-len(first))
	for _, v := range rest {
		seen[v]++
	}
	for i := range total {
		if n := seen[fmt.Sprint(i)]; n != 1 {
			t.Fatalf("record %d read %d times across the coordinator stop", i, n)
		}
	}
}

// consumeAndCommit joins group, reads n records, commits them and leaves.
func consumeAndCommit(t *testing.T, ctx context.Context, addrs []string, topic, group string, n int) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		// A leave still in flight when the coordinator stops is lost with
		// it; the new coordinator then expires the member after its
		// session timeout, which the minimum keeps short.
		kgo.SessionTimeout(6*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []string
	for len(out) < n {
		fs := cl.PollRecords(ctx, n-len(out))
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d: %v", len(out), n, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Logf("fetch %s-%d: %v", topic, p, err) })
		recs := fs.Records()
		for _, r := range recs {
			out = append(out, string(r.Value))
		}
		if len(recs) > 0 {
			if err := cl.CommitRecords(ctx, recs...); err != nil {
				t.Fatalf("commit: %v", err)
			}
		}
	}
	return out
}
