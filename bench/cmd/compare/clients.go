package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// createTopic creates a topic replicated to every node of t (min.insync.replicas 2 on 3
// nodes) and waits until every partition has a leader and all its replicas in sync, so a
// workload never measures topic creation or the followers' first catch-up.
func createTopic(ctx context.Context, t target, topic string, partitions int) error {
	rf := max(t.Nodes(), 1)
	var configs map[string]*string
	if rf > 1 {
		minISR := strconv.Itoa(clusterMinISR(rf))
		configs = map[string]*string{"min.insync.replicas": &minISR}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds(t.Bootstrap())...))
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, int32(partitions), int16(rf), configs, topic)
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	if resp.Err != nil {
		return fmt.Errorf("create topic %s: %w", topic, resp.Err)
	}
	for {
		md, err := adm.Metadata(ctx, topic)
		if err == nil {
			if td, ok := md.Topics[topic]; ok && td.Err == nil && len(td.Partitions) == partitions && allLedInSync(td, rf) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topic %s: partitions without a leader: %w", topic, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// seeds splits a bootstrap list ("host:port,host:port") into the client's seed brokers.
func seeds(bootstrap string) []string { return strings.Split(bootstrap, ",") }

func allLedInSync(td kadm.TopicDetail, rf int) bool {
	for _, p := range td.Partitions {
		if p.Err != nil || p.Leader < 0 || len(p.Replicas) != rf || len(p.ISR) != rf {
			return false
		}
	}
	return true
}

// endOffsets returns each partition's end offset.
func endOffsets(ctx context.Context, bootstrap, topic string) (map[int32]int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds(bootstrap)...))
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	listed, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("list end offsets of %s: %w", topic, err)
	}
	if err := listed.Error(); err != nil {
		return nil, fmt.Errorf("list end offsets of %s: %w", topic, err)
	}
	ends := make(map[int32]int64)
	listed.Each(func(o kadm.ListedOffset) { ends[o.Partition] = o.Offset })
	return ends, nil
}

// catchUpRead reads every partition of a topic from its start to the end offsets given,
// without a consumer group (assigned partitions), and returns the records and value bytes
// read. Fetch sizes are the Java consumer's defaults (50 MiB per request, 1 MiB per
// partition), which consumer-perf-test also uses.
func catchUpRead(ctx context.Context, bootstrap, topic string, ends map[int32]int64) (int64, int64, error) {
	start := make(map[int32]kgo.Offset)
	next := make(map[int32]int64)
	for p, end := range ends {
		if end > 0 {
			start[p] = kgo.NewOffset().AtStart()
			next[p] = 0
		}
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(seeds(bootstrap)...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: start}),
		kgo.FetchMaxBytes(50<<20),
		kgo.FetchMaxPartitionBytes(1<<20),
	)
	if err != nil {
		return 0, 0, fmt.Errorf("consumer client: %w", err)
	}
	defer cl.Close()
	var records, bytesRead int64
	remaining := len(next)
	for remaining > 0 {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return records, bytesRead, fmt.Errorf("catch-up read stopped with %d partitions unfinished: %w", remaining, err)
		}
		var fetchErr error
		fetches.EachError(func(t string, p int32, err error) {
			fetchErr = errors.Join(fetchErr, fmt.Errorf("%s-%d: %w", t, p, err))
		})
		if fetchErr != nil {
			return records, bytesRead, fmt.Errorf("catch-up fetch: %w", fetchErr)
		}
		fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
			for _, r := range fp.Records {
				records++
				bytesRead += int64(len(r.Value))
			}
			if n := len(fp.Records); n > 0 {
				before := next[fp.Partition]
				next[fp.Partition] = fp.Records[n-1].Offset + 1
				if before < ends[fp.Partition] && next[fp.Partition] >= ends[fp.Partition] {
					remaining--
				}
			}
		})
	}
	return records, bytesRead, nil
}

// runConsumerPerf runs Kafka's consumer-perf-test (a classic consumer group) for n
// records and returns its result; extra are more of the tool's arguments.
func runConsumerPerf(ctx context.Context, kafkaRef, bootstrap, topic, group string, n int64, extra ...string) (consumerPerfResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	cmd := toolCommand(ctx, kafkaRef, "consumer-perf-test", append([]string{
		"--bootstrap-server", bootstrap, "--topic", topic, "--group", group,
		"--num-records", strconv.FormatInt(n, 10), "--timeout", "30000"}, extra...)...)
	var stdout bytes.Buffer
	stderr := &boundedBuffer{max: 4000}
	cmd.Stdout = &stdout
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		return consumerPerfResult{}, fmt.Errorf("consumer-perf-test: %w; stderr: %s", err, truncate(stderr.String(), 1500))
	}
	res, err := parseConsumerPerf(stdout.String())
	if err != nil {
		return res, fmt.Errorf("%w; stderr: %s", err, truncate(stderr.String(), 800))
	}
	if res.Records < n {
		return res, fmt.Errorf("consumer-perf-test read %d of %d records", res.Records, n)
	}
	return res, nil
}

// timeToFirstProduce relaunches a stopped broker on its data and returns the time from the
// exec to the first acknowledged produce (acks=all, not idempotent, so no producer id is
// needed) to an existing topic. The client polls the port every 5 ms and retries every
// 10 ms, so the client's own back-off adds at most that to the figure.
func timeToFirstProduce(ctx context.Context, b broker, topic string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	t0 := time.Now()
	if err := b.Relaunch(); err != nil {
		return 0, err
	}
	for {
		conn, err := net.DialTimeout("tcp", b.Bootstrap(), time.Second)
		if err == nil {
			conn.Close()
			break
		}
		if !processAlive(b.PID()) {
			return 0, fmt.Errorf("broker exited during restart")
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("broker port %s never opened: %w", b.Bootstrap(), ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(b.Bootstrap()),
		kgo.DisableIdempotentWrite(),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(0),
		kgo.MetadataMinAge(10*time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 10 * time.Millisecond }),
	)
	if err != nil {
		return 0, fmt.Errorf("producer client: %w", err)
	}
	defer cl.Close()
	rec := &kgo.Record{Topic: topic, Value: []byte("first produce after restart")}
	if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		return 0, fmt.Errorf("first produce after restart: %w", err)
	}
	return time.Since(t0), nil
}
