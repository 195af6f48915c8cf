// Command capture records the request and response frames of the golden
// error cases (internal/api/golden_errors_test.go) against a broker: run it
// against the pinned Apache Kafka (reference kit, auto.create.topics.enable
// =false) to refresh the goldens. Each case writes NAME.req.bin (the request
// frame sent, correlation id 1) and NAME.resp.bin (the response frame read
// back); the test replays the request bytes against Sluice.
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// existingTopic is created (one partition) before the cases run; the test
// creates it in Sluice the same way.
const (
	existingTopic = "golden-existing"
	missingTopic  = "golden-missing"
	clientID      = "sluice-golden"
)

type goldenCase struct {
	name string
	req  kmsg.Request
}

func cases() []goldenCase {
	var out []goldenCase
	add := func(name string, version int16, req kmsg.Request) {
		req.SetVersion(version)
		out = append(out, goldenCase{name, req})
	}

	invalid := kmsg.NewPtrCreateTopicsRequest()
	invalid.TimeoutMillis = 30000
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = "bad/name", 1, 1
	invalid.Topics = append(invalid.Topics, t)
	add("create_topics_invalid_name_v7", 7, invalid)

	existing := kmsg.NewPtrCreateTopicsRequest()
	existing.TimeoutMillis = 30000
	t = kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = existingTopic, 1, 1
	existing.Topics = append(existing.Topics, t)
	add("create_topics_existing_v7", 7, existing)

	meta := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(missingTopic)
	meta.Topics = append(meta.Topics, mt)
	meta.AllowAutoTopicCreation = false
	add("metadata_unknown_topic_v12", 12, meta)

	produce := kmsg.NewPtrProduceRequest()
	produce.Acks = 1
	produce.TimeoutMillis = 30000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = missingTopic
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = oneRecordBatch()
	pt.Partitions = append(pt.Partitions, pp)
	produce.Topics = append(produce.Topics, pt)
	add("produce_unknown_topic_acks1_v12", 12, produce)

	list := kmsg.NewPtrListOffsetsRequest()
	list.ReplicaID = -1
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = existingTopic
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Partition = 5
	lp.Timestamp = -1
	lt.Partitions = append(lt.Partitions, lp)
	list.Topics = append(list.Topics, lt)
	add("list_offsets_unknown_partition_v9", 9, list)

	describe := kmsg.NewPtrDescribeConfigsRequest()
	dr := kmsg.NewDescribeConfigsRequestResource()
	dr.ResourceType = kmsg.ConfigResourceTypeTopic
	dr.ResourceName = missingTopic
	describe.Resources = append(describe.Resources, dr)
	add("describe_configs_unknown_topic_v4", 4, describe)

	del := kmsg.NewPtrDeleteTopicsRequest()
	del.TimeoutMillis = 30000
	dt := kmsg.NewDeleteTopicsRequestTopic()
	dt.Topic = kmsg.StringPtr(missingTopic)
	del.Topics = append(del.Topics, dt)
	add("delete_topics_unknown_v6", 6, del)
	return out
}

// oneRecordBatch is a valid uncompressed batch v2 of one record with fixed
// timestamps, so the request bytes are the same on every capture.
func oneRecordBatch() []byte {
	rec := kmsg.NewRecord()
	rec.Key = []byte("k")
	rec.Value = []byte("v")
	// A record's length prefix counts what follows it; kmsg writes the
	// field as given. Small records have a one-byte prefix either way.
	rec.Length = int32(len(rec.AppendTo(nil)) - 1)
	recBytes := rec.AppendTo(nil)
	b := kmsg.NewRecordBatch()
	b.Magic = 2
	b.PartitionLeaderEpoch = -1
	b.FirstTimestamp = 1_764_460_800_000
	b.MaxTimestamp = 1_764_460_800_000
	b.ProducerID = -1
	b.ProducerEpoch = -1
	b.FirstSequence = -1
	b.NumRecords = 1
	b.Records = recBytes
	raw := b.AppendTo(nil)
	// batchLength counts the bytes after its own field; the CRC covers
	// attributes to the end (from offset 21).
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

func main() {
	addr := flag.String("bootstrap", "", "broker host:port")
	dir := flag.String("out", ".", "directory for NAME.req.bin and NAME.resp.bin")
	flag.Parse()
	if *addr == "" {
		fmt.Fprintln(os.Stderr, "capture: --bootstrap is required")
		os.Exit(2)
	}
	if err := run(*addr, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "capture:", err)
		os.Exit(1)
	}
}

func run(addr, dir string) error {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	formatter := kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID))

	create := kmsg.NewPtrCreateTopicsRequest()
	create.SetVersion(7)
	create.TimeoutMillis = 30000
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = existingTopic, 1, 1
	create.Topics = append(create.Topics, t)
	if _, err := roundTrip(conn, formatter.AppendRequest(nil, create, 1)); err != nil {
		return fmt.Errorf("creating %s: %w", existingTopic, err)
	}
	// Let the new topic reach the broker's metadata before asking about it.
	time.Sleep(2 * time.Second)

	for _, c := range cases() {
		req := formatter.AppendRequest(nil, c.req, 1)
		resp, err := roundTrip(conn, req)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, c.name+".req.bin"), req, 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, c.name+".resp.bin"), resp, 0o644); err != nil {
			return err
		}
		fmt.Printf("%s: request %d bytes, response %d bytes\n", c.name, len(req), len(resp))
	}
	return nil
}

// roundTrip writes one request frame and reads one whole response frame.
func roundTrip(conn net.Conn, req []byte) ([]byte, error) {
	conn.SetDeadline(time.Now().Add(40 * time.Second))
	if _, err := conn.Write(req); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(conn, size[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > 16<<20 {
		return nil, fmt.Errorf("response frame of %d bytes", n)
	}
	frame := make([]byte, 4+n)
	copy(frame, size[:])
	if _, err := io.ReadFull(conn, frame[4:]); err != nil {
		return nil, err
	}
	return frame, nil
}
