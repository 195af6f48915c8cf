package node

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/protocol"
	"github.com/sluice-io/sluice/internal/records"
)

// produceWindow is the requests a benchmark connection keeps in flight,
// the Java producer's max.in.flight.requests.per.connection default.
const produceWindow = 5

// BenchmarkProduce measures the broker's produce path in process, with as
// little client work as possible: one raw connection sends prebuilt Produce
// v11 requests (one 16 KiB batch of 16 random 1 KiB records per partition,
// uncompressed), up to produceWindow in flight, and checks each response.
// An idempotent row only patches each batch's base sequence and CRC in the
// wire bytes. Besides ns/op and MB/s it reports the process's CPU seconds
// per GB produced, in all and split into user and kernel time (getrusage;
// the client's share is small and visible in a -cpuprofile):
//
//	go test -run '^$' -bench '^BenchmarkProduce$' -benchtime 20000x -produce.dir=/dev/shm ./internal/node
func BenchmarkProduce(b *testing.B) {
	bn := startBenchNode(b, benchDir(b), map[string]string{
		"log.segment.bytes":               fmt.Sprint(64 << 20),
		"log.retention.bytes":             fmt.Sprint(128 << 20),
		"log.retention.check.interval.ms": "1000",
		"file.delete.delay.ms":            "1000",
	}, nil)
	for _, acks := range []string{"1", "all-idem"} {
		for _, parts := range []int32{1, 16} {
			name := fmt.Sprintf("acks=%s/partitions=%d", acks, parts)
			topic := fmt.Sprintf("bench-%s-%d", acks, parts)
			createBenchTopic(b, bn.addr, topic, parts)
			b.Run(name, func(b *testing.B) { benchProduce(b, bn.addr, topic, parts, acks == "all-idem") })
		}
	}
}

// produceConn is a benchmark connection with its prebuilt request.
type produceConn struct {
	c          net.Conn
	wire       []byte
	batchAt    []int // offset of each partition's batch in wire
	batchBytes int
	idem       bool
	records    int32
}

func benchProduce(b *testing.B, addr, topic string, parts int32, idem bool) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	pc := &produceConn{c: c, idem: idem, records: 16}
	pid, epoch := int64(-1), int16(-1)
	if idem {
		pid, epoch = benchInitProducerID(b, c)
	}
	pc.build(b, topic, parts, pid, epoch)
	b.SetBytes(int64(pc.batchBytes))
	b.ReportAllocs()
	inflight := make(chan struct{}, produceWindow)
	errs := make(chan error, 1)
	go pc.readResponses(b.N, inflight, errs)
	var before syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	start := time.Now()
	b.ResetTimer()
	for i := range b.N {
		inflight <- struct{}{}
		if i > 0 && idem {
			pc.nextSequence(int32(i) * pc.records)
		}
		if _, err := c.Write(pc.wire); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	elapsed := time.Since(start)
	var after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	user := tvSeconds(after.Utime) - tvSeconds(before.Utime)
	sys := tvSeconds(after.Stime) - tvSeconds(before.Stime)
	gb := float64(b.N) * float64(pc.batchBytes) / 1e9
	b.ReportMetric((user+sys)/gb, "cpu-s/GB")
	// The kernel's share (socket and page-cache copies, fsync) apart from
	// the process's own: the latter is what the broker's code decides.
	b.ReportMetric(user/gb, "user-s/GB")
	b.ReportMetric(sys/gb, "sys-s/GB")
	b.ReportMetric((user+sys)/elapsed.Seconds(), "cores")
}

func tvSeconds(tv syscall.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }

// build encodes the Produce request: one batch per partition.
func (pc *produceConn) build(b *testing.B, topic string, parts int32, pid int64, epoch int16) {
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(11)
	req.Acks, req.TimeoutMillis = 1, 30000
	if pc.idem {
		req.Acks = -1
	}
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	var batches [][]byte
	for p := range parts {
		opts := records.BuilderOptions{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: -1, LogAppendTimeMs: -1}
		if pc.idem {
			opts.BaseSequence = 0
		}
		bld := records.NewBuilder(opts)
		now := time.Now().UnixMilli()
		for _, v := range randomValues(b, int(pc.records)) {
			bld.Add(now, nil, v, nil)
		}
		batch, err := bld.Build()
		if err != nil {
			b.Fatal(err)
		}
		batches = append(batches, batch)
		pc.batchBytes += len(batch)
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = p, batch
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	pc.wire = kmsg.NewRequestFormatter(kmsg.FormatterClientID("bench")).AppendRequest(nil, req, 1)
	for _, batch := range batches {
		at := bytes.Index(pc.wire, batch[:records.HeaderSize+64]) // random values: unique
		if at < 0 {
			b.Fatal("batch not found in the encoded request")
		}
		pc.batchAt = append(pc.batchAt, at)
	}
}

// nextSequence gives every batch in the wire the base sequence seq.
func (pc *produceConn) nextSequence(seq int32) {
	for _, at := range pc.batchAt {
		h, _ := records.ParseHeader(pc.wire[at:])
		batch := pc.wire[at : at+int(h.Size())]
		binary.BigEndian.PutUint32(batch[records.OffsetBaseSequence:], uint32(seq))
		records.UpdateCRC(batch)
	}
}

// readResponses reads n Produce responses, freeing a window slot for each,
// and sends the first error (or nil after the last) to errs.
func (pc *produceConn) readResponses(n int, inflight chan struct{}, errs chan<- error) {
	var buf []byte
	var err error
	for range n {
		if buf, err = protocol.ReadFrame(pc.c, 64<<20, buf); err != nil {
			errs <- err
			return
		}
		<-inflight
		resp := kmsg.NewPtrProduceResponse()
		resp.SetVersion(11)
		// Correlation id, then the flexible header's empty tag section.
		if err := resp.ReadFrom(buf[5:]); err != nil {
			errs <- err
			return
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					errs <- fmt.Errorf("partition %d: %w", p.Partition, err)
					return
				}
			}
		}
	}
	errs <- nil
}

// benchInitProducerID asks the broker for an idempotent producer id on c.
func benchInitProducerID(b *testing.B, c io.ReadWriter) (int64, int16) {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.SetVersion(4)
	req.TransactionTimeoutMillis = 60000
	wire := kmsg.NewRequestFormatter(kmsg.FormatterClientID("bench")).AppendRequest(nil, req, 1)
	if _, err := c.Write(wire); err != nil {
		b.Fatal(err)
	}
	buf, err := protocol.ReadFrame(c, 1<<20, nil)
	if err != nil {
		b.Fatal(err)
	}
	resp := kmsg.NewPtrInitProducerIDResponse()
	resp.SetVersion(4)
	if err := resp.ReadFrom(buf[5:]); err != nil {
		b.Fatal(err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		b.Fatal(err)
	}
	return resp.ProducerID, resp.ProducerEpoch
}
