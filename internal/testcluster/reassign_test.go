package testcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/testutil"
)

// TestReassignPartitionUnderLoad moves a partition holding data from
// brokers {1,2,3} to {2,3,4} while an acks=all producer keeps writing: the
// move completes with every acknowledged record on each new replica, and
// broker 1, the old leader, deletes its copy.
func TestReassignPartitionUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 4-node cluster")
	}
	c := Start(t, Options{Nodes: 4})
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Layout.BrokerAddrs()...), kgo.DefaultProduceTopic("moved"),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(2*time.Millisecond),
		kgo.RetryTimeout(60*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	createAssigned(t, cl, "moved", []int32{1, 2, 3})

	var mu sync.Mutex
	var acked []string
	produce := func(ctx context.Context, from, n int) {
		var wg sync.WaitGroup
		for i := from; i < from+n && ctx.Err() == nil; i++ {
			v := fmt.Sprintf("v%06d", i)
			wg.Add(1)
			cl.Produce(ctx, &kgo.Record{Value: []byte(v)}, func(_ *kgo.Record, err error) {
				defer wg.Done()
				if err == nil {
					mu.Lock()
					acked = append(acked, v)
					mu.Unlock()
				}
			})
			time.Sleep(time.Millisecond) // the load's pace: about one record a millisecond
		}
		wg.Wait()
	}
	produce(context.Background(), 0, 2000)

	ctx, stopProducing := context.WithCancel(context.Background())
	producing := make(chan struct{})
	go func() {
		defer close(producing)
		produce(ctx, 2000, 1<<30)
	}()

	alterAssignment(t, cl, "moved", []int32{2, 3, 4})
	tp := kafka.TopicPartition{Topic: "moved", Partition: 0}
	testutil.Eventually(t, 60*time.Second, func() bool {
		for i := range 4 {
			st, ok := c.Node(i).Image().Partition(tp)
			if !ok || st.Reassigning() || !slices.Equal(st.Replicas, []int32{2, 3, 4}) {
				return false
			}
		}
		return true
	}, "the reassignment to complete")
	if n := listedReassignments(t, cl); n != 0 {
		t.Fatalf("%d reassignments listed after completion", n)
	}
	// Writes go on against the new leader.
	mu.Lock()
	ackedAtMove := len(acked)
	mu.Unlock()
	testutil.Eventually(t, 30*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) >= ackedAtMove+200
	}, "200 more records acknowledged by the new leader")
	stopProducing()
	<-producing

	mu.Lock()
	want := slices.Clone(acked)
	mu.Unlock()
	if len(want) < 2000 {
		t.Fatalf("only %d records acknowledged", len(want))
	}
	for _, id := range []int32{2, 3, 4} {
		dir := filepath.Join(c.Layout.Nodes[id-1].LogDir, "moved-0")
		testutil.EventuallyNoError(t, 30*time.Second, func() error {
			have := logValues(t, dir)
			var missing []string
			for _, v := range want {
				if !have[v] {
					missing = append(missing, v)
				}
			}
			if len(missing) > 0 {
				return fmt.Errorf("lacks %d of %d acknowledged records, first %s", len(missing), len(want), missing[0])
			}
			return nil
		}, "broker %d has every acknowledged record", id)
	}
	old := filepath.Join(c.Layout.Nodes[0].LogDir, "moved-0")
	testutil.Eventually(t, 30*time.Second, func() bool {
		_, err := os.Stat(old)
		return errors.Is(err, os.ErrNotExist)
	}, "broker 1 to delete its copy")
}

// createAssigned creates a one-partition topic on the given replicas with
// min.insync.replicas 2, retrying while the cluster settles.
func createAssigned(t *testing.T, cl *kgo.Client, topic string, replicas []int32) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	ra.Partition, ra.Replicas = 0, replicas
	rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	cfg := kmsg.NewCreateTopicsRequestTopicConfig()
	cfg.Name, cfg.Value = "min.insync.replicas", kmsg.StringPtr("2")
	rt.Configs = append(rt.Configs, cfg)
	req.Topics = append(req.Topics, rt)
	testutil.Eventually(t, 30*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := req.RequestWith(ctx, cl)
		return err == nil && (resp.Topics[0].ErrorCode == 0 || resp.Topics[0].ErrorCode == kerr.TopicAlreadyExists.Code)
	}, "topic creation")
}

// alterAssignment starts a reassignment of partition 0 of topic.
func alterAssignment(t *testing.T, cl *kgo.Client, topic string, replicas []int32) {
	t.Helper()
	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
	rp.Partition, rp.Replicas = 0, replicas
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("AlterPartitionReassignments: %v", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		t.Fatalf("AlterPartitionReassignments: %v", err)
	}
	if err := kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode); err != nil {
		t.Fatalf("AlterPartitionReassignments %s-0: %v", topic, err)
	}
}

// listedReassignments counts the partitions ListPartitionReassignments names.
func listedReassignments(t *testing.T, cl *kgo.Client) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := kmsg.NewPtrListPartitionReassignmentsRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("ListPartitionReassignments: %v", err)
	}
	n := 0
	for _, rt := range resp.Topics {
		n += len(rt.Partitions)
	}
	return n
}

// logValues reads the record values in a partition dir's segments.
func logValues(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	segments, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, seg := range segments {
		b, err := os.ReadFile(seg)
		if err != nil {
			continue // rolled or deleted meanwhile; the caller polls again
		}
		// A batch being appended at the end is not whole yet; Batches
		// stops before it.
		_, _ = records.Batches(b, func(_ records.Header, batch []byte) error {
			return records.ForEachRecord(batch, func(r records.Record) error {
				out[string(r.Value)] = true
				return nil
			})
		})
	}
	return out
}
