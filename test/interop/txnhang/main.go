// Command txnhang leaves a hanging transaction on a partition, as a producer racing an
// abort or a client from before KIP-890 could: it takes a producer id for a transactional
// id (InitProducerId at the coordinator), writes one transactional batch to a partition
// without adding the partition to its transaction (no AddPartitionsToTxn), prints
// "open PRODUCER_ID EPOCH BASE_OFFSET" and waits to be killed. Only a broker with
// transaction.partition.verification.enable=false takes the batch (with verification the
// leader asks the coordinator, which refuses it); the transaction is then open on the
// partition while its coordinator knows nothing of it, which is what Kafka's
// kafka-transactions find-hanging reports and abort closes.
//
//	go run ./test/interop/txnhang --bootstrap HOST:PORT --topic T --partition P --transactional-id ID
package main

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"hash/crc32"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

func main() {
	bootstrap := flag.String("bootstrap", "", "broker host:port")
	topic := flag.String("topic", "", "topic to leave the transaction open on")
	partition := flag.Int("partition", 0, "partition")
	txnID := flag.String("transactional-id", "", "transactional id")
	records := flag.Int("records", 2, "records in the open batch")
	flag.Parse()
	if *bootstrap == "" || *topic == "" || *txnID == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*bootstrap, *topic, int32(*partition), *txnID, *records); err != nil {
		fmt.Fprintln(os.Stderr, "txnhang:", err)
		os.Exit(1)
	}
	select {} // the caller kill -9s us, as a crashed producer
}

func run(bootstrap, topic string, partition int32, txnID string, records int) error {
	// Produce v11 at most: v13 names topics by id, and the batch is the same at any version.
	versions := kversion.Stable()
	versions.SetMaxKeyVersion(0, 11)
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.MaxVersions(versions))
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pid, epoch, err := initProducerID(ctx, cl, txnID)
	if err != nil {
		return err
	}
	leader, err := leaderOf(ctx, cl, topic, partition)
	if err != nil {
		return err
	}
	req := kmsg.NewPtrProduceRequest()
	req.TransactionID = &txnID
	req.Acks = -1
	req.TimeoutMillis = 30000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = partition
	rp.Records = transactionalBatch(pid, epoch, records)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl.Broker(int(leader)))
	if err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	p := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return fmt.Errorf("produce to %s-%d: %w", topic, partition, err)
	}
	fmt.Printf("open %d %d %d\n", pid, epoch, p.BaseOffset)
	return nil
}

// initProducerID retries while the coordinator loads or is being created.
func initProducerID(ctx context.Context, cl *kgo.Client, txnID string) (int64, int16, error) {
	for {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID = &txnID
		req.TransactionTimeoutMillis = 600000
		resp, err := req.RequestWith(ctx, cl)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if err == nil {
			return resp.ProducerID, resp.ProducerEpoch, nil
		}
		if !kerr.IsRetriable(err) || ctx.Err() != nil {
			return 0, 0, fmt.Errorf("init producer id for %q: %w", txnID, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func leaderOf(ctx context.Context, cl *kgo.Client, topic string, partition int32) (int32, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = &topic
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return 0, fmt.Errorf("metadata: %w", err)
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.Partition == partition && p.ErrorCode == 0 {
				return p.Leader, nil
			}
		}
	}
	return 0, fmt.Errorf("metadata: no leader for %s-%d", topic, partition)
}

// transactionalBatch is a record batch v2 with the transactional attribute, sequence 0.
func transactionalBatch(pid int64, epoch int16, n int) []byte {
	var recs []byte
	now := time.Now().UnixMilli()
	for i := 0; i < n; i++ {
		rec := kmsg.NewRecord()
		rec.OffsetDelta = int32(i)
		rec.Key = []byte(fmt.Sprintf("hang-%d", i))
		rec.Value = []byte(fmt.Sprintf("hang-%d", i))
		// The length prefix counts what follows it; small records have a one-byte prefix.
		rec.Length = int32(len(rec.AppendTo(nil)) - 1)
		recs = rec.AppendTo(recs)
	}
	b := kmsg.NewRecordBatch()
	b.Magic = 2
	b.PartitionLeaderEpoch = -1
	b.Attributes = 0x10 // transactional
	b.LastOffsetDelta = int32(n - 1)
	b.FirstTimestamp = now
	b.MaxTimestamp = now
	b.ProducerID = pid
	b.ProducerEpoch = epoch
	b.FirstSequence = 0
	b.NumRecords = int32(n)
	b.Records = recs
	raw := b.AppendTo(nil)
	// batchLength counts the bytes after its own field; the CRC covers attributes onwards.
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}
