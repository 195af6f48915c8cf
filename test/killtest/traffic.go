package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// keysPerRun spreads records over the partitions by key, through kgo's default partitioner.
const keysPerRun = 16

// createTopic creates the test topic, retrying only errors Kafka calls retriable (a server
// that answers ApiVersions may still be electing its controller).
func createTopic(ctx context.Context, bootstrap, topic string, partitions int32) error {
	client, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	defer client.Close()
	admin := kadm.NewClient(client)
	for {
		resp, err := admin.CreateTopic(ctx, partitions, 1, nil, topic)
		if err == nil {
			err = resp.Err
		}
		if err == nil {
			return nil
		}
		if !kerr.IsRetriable(err) || ctx.Err() != nil {
			return fmt.Errorf("create topic %s: %w", topic, err)
		}
		fmt.Printf("killtest: create topic %s: %v (retriable; retrying)\n", topic, err)
		time.Sleep(200 * time.Millisecond)
	}
}

// produceUntil sends numbered records (value = sequence number) at about rate per second
// with kgo's default producer settings (acks=all, idempotent, unlimited retries) until
// stop ends, then waits for every outstanding record to resolve or flushDeadline to pass.
// Records carry recordCtx, not stop: kgo may fail buffered records whose context is done,
// and stopping the sender must not fail what is already buffered. It returns the number
// of records still unresolved at the end.
func produceUntil(stop, recordCtx context.Context, client *kgo.Client, topic string, rate int, book *ledger, flushDeadline time.Duration) int64 {
	const tick = 10 * time.Millisecond
	perTick := max(1, rate/int(time.Second/tick))
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	var seq int64
sending:
	for {
		select {
		case <-stop.Done():
			break sending
		case <-ticker.C:
		}
		for range perTick {
			seq++
			r := &kgo.Record{
				Topic: topic,
				Key:   []byte("k" + strconv.FormatInt(seq%keysPerRun, 10)),
				Value: []byte(strconv.FormatInt(seq, 10)),
			}
			book.noteSent()
			n := seq
			// Produce blocks while kgo's buffer is full (the server is down); recordCtx
			// (the whole test's bound) ends that.
			client.Produce(recordCtx, r, func(r *kgo.Record, err error) {
				if err != nil {
					book.fail(n, err)
					return
				}
				book.ack(r.Partition, n, r.Offset)
			})
		}
	}
	flushCtx, cancel := context.WithTimeout(context.Background(), flushDeadline)
	defer cancel()
	if err := client.Flush(flushCtx); err != nil {
		fmt.Printf("killtest: flush: %v\n", err)
	}
	s := book.snapshot()
	return s.sent - int64(s.ackedCount()) - int64(len(s.failed))
}

// readBack reads every partition of topic from offset 0 to its end offset, as they are
// when it is called, with a default kgo consumer (no group).
func readBack(ctx context.Context, bootstrap, topic string) (map[int32][]readRecord, error) {
	admin, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		return nil, fmt.Errorf("admin client: %w", err)
	}
	ends, err := kadm.NewClient(admin).ListEndOffsets(ctx, topic)
	admin.Close()
	if err != nil {
		return nil, fmt.Errorf("list end offsets: %w", err)
	}
	want := make(map[int32]int64)
	start := make(map[int32]kgo.Offset)
	var listErr error
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			listErr = errors.Join(listErr, fmt.Errorf("end offset of partition %d: %w", o.Partition, o.Err))
		}
		want[o.Partition] = o.Offset
		start[o.Partition] = kgo.NewOffset().At(0)
	})
	if listErr != nil {
		return nil, listErr
	}
	consumer, err := kgo.NewClient(kgo.SeedBrokers(bootstrap),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: start}))
	if err != nil {
		return nil, fmt.Errorf("consumer: %w", err)
	}
	defer consumer.Close()
	read := make(map[int32][]readRecord)
	done := func() bool {
		for p, end := range want {
			if n := len(read[p]); n > 0 && read[p][n-1].offset >= end-1 {
				continue
			} else if end > 0 {
				return false
			}
		}
		return true
	}
	for !done() {
		fetches := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			return read, fmt.Errorf("read back to end offsets %v: %w", want, ctx.Err())
		}
		var fetchErr error
		fetches.EachError(func(t string, p int32, err error) {
			fetchErr = errors.Join(fetchErr, fmt.Errorf("fetch %s/%d: %w", t, p, err))
		})
		if fetchErr != nil {
			return read, fetchErr
		}
		var parseErr error
		fetches.EachRecord(func(r *kgo.Record) {
			seq, err := strconv.ParseInt(string(r.Value), 10, 64)
			if err != nil {
				parseErr = errors.Join(parseErr, fmt.Errorf("partition %d offset %d: value %q is not a sequence number", r.Partition, r.Offset, r.Value))
				return
			}
			read[r.Partition] = append(read[r.Partition], readRecord{seq: seq, offset: r.Offset})
		})
		if parseErr != nil {
			return read, parseErr
		}
	}
	return read, nil
}
