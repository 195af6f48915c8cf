package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// maxInputRecord bounds one record read from stdin; a larger one is an error
// rather than an unbounded buffer.
const maxInputRecord = 16 << 20

// produceFlags are the flags of `sluice produce`.
type produceFlags struct {
	delimiter, keySeparator, acks, compression string
	headers                                    []string
	partition                                  int32
	verbose                                    bool
}

func newProduceCommand() *cobra.Command {
	conn := &connection{}
	var pf produceFlags
	cmd := &cobra.Command{
		Use:   "produce TOPIC",
		Short: "Write records read from stdin (one per line, or per --delimiter) to a topic",
		Long: "Reads stdin until end of input and produces one record per line (or per --delimiter). " +
			"With --key-separator each record is KEY<sep>VALUE. The command returns once every record is " +
			"acknowledged, or with the first error; a record not acknowledged within --timeout fails it. " +
			"A missing topic is created when the server allows it (auto.create.topics.enable), as with " +
			"Kafka's console producer.",
		Example: `  seq 1 100 | sluice produce numbers
  printf 'k1:v1\nk2:v2\n' | sluice produce orders --key-separator : -H source=cli -v
  cat payloads.bin | sluice produce blobs --delimiter '\0' --acks 1 --compression zstd`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeTopics(conn, true),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runProduce(cmd, conn, args[0], &pf)
		},
	}
	addConnectionFlags(cmd, conn)
	f := cmd.Flags()
	f.StringVar(&pf.delimiter, "delimiter", "\n", `record delimiter in the input (escapes \n \t \r \0)`)
	f.StringVarP(&pf.keySeparator, "key-separator", "k", "", "split each record into KEY<sep>VALUE at the first separator")
	f.StringArrayVarP(&pf.headers, "header", "H", nil, "header key=value added to every record (repeatable)")
	f.Int32VarP(&pf.partition, "partition", "p", -1, "partition to write to (-1: the default partitioner, murmur2 on the key)")
	f.StringVar(&pf.acks, "acks", "all", "acknowledgements: all (-1), 1 or 0")
	f.StringVarP(&pf.compression, "compression", "z", "none", "batch compression: none, gzip, snappy, lz4, zstd")
	f.BoolVarP(&pf.verbose, "verbose", "v", false, "print the partition and offset of every record")
	return cmd
}

// inputRecord is one record read from stdin, or the error that ended the
// input.
type inputRecord struct {
	rec *kgo.Record
	err error
}

func runProduce(cmd *cobra.Command, conn *connection, topic string, pf *produceFlags) error {
	delim, err := unescape(pf.delimiter)
	if err != nil || delim == "" {
		return fmt.Errorf(`--delimiter %q: want a non-empty string (escapes \n \t \r \0 allowed)`, pf.delimiter)
	}
	keySep, err := unescape(pf.keySeparator)
	if err != nil {
		return fmt.Errorf("--key-separator %q: %w", pf.keySeparator, err)
	}
	hdrs, err := recordHeaders(pf.headers)
	if err != nil {
		return err
	}
	opts, err := producerOptions(pf.acks, pf.compression, true)
	if err != nil {
		return err
	}
	tracker := newDeliveryTracker()
	// kgo's own record timeout fails what it safely can; the tracker
	// fails the rest (records written to a broker that never answered).
	// A missing topic is created where the server allows it, as the
	// console producer's metadata requests ask.
	opts = append(opts, kgo.DefaultProduceTopic(topic), kgo.RecordDeliveryTimeout(conn.timeout),
		kgo.AllowAutoTopicCreation(), kgo.WithHooks(tracker))
	if pf.partition >= 0 {
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	messages := newProduceMessages(tracker.notePartition)
	conn.wrapConn = messages.wrap
	cl, err := conn.client(cmd, opts...)
	if err != nil {
		return err
	}
	base := cmd.Context()
	if base == nil {
		base = context.Background()
	}
	if err := conn.ping(base, cmd, cl); err != nil {
		cl.Close()
		return err
	}
	ctx, cancel := context.WithCancelCause(base)
	defer cancel(nil)
	p := &lineProducer{cl: cl, tracker: tracker, messages: messages, verbose: pf.verbose, noAcks: pf.acks == "0", out: cmd.OutOrStdout()}
	go p.watch(ctx, cancel, conn.timeout)
	input := make(chan inputRecord)
	go readRecords(cmd.InOrStdin(), []byte(delim), keySep, pf.keySeparator, hdrs, pf.partition, input)
	err = p.run(ctx, input)
	if err == nil {
		if ferr := cl.Flush(ctx); ferr != nil {
			err = ferr
		}
	}
	if err == nil {
		err = p.firstError()
	}
	if err != nil {
		// Records still waiting are failed, not sent: the command is over.
		cancel(err)
		go cl.Close()
		return fmt.Errorf("produce to %s: %w", topic, p.explain(ctx, err, conn.timeout))
	}
	cl.Close()
	return nil
}

// readRecords scans r into records sent on out, then closes out; an input
// error (a record too long, a missing key separator) is sent last.
func readRecords(r io.Reader, delim []byte, keySep, keySepFlag string, hdrs []kgo.RecordHeader, partition int32, out chan<- inputRecord) {
	defer close(out)
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 64<<10), maxInputRecord)
	scanner.Split(splitOn(delim))
	line := 0
	for scanner.Scan() {
		line++
		rec := &kgo.Record{Headers: hdrs, Partition: partition}
		data := bytes.Clone(scanner.Bytes())
		if keySep != "" {
			k, v, ok := bytes.Cut(data, []byte(keySep))
			if !ok {
				out <- inputRecord{err: fmt.Errorf("record %d: no key separator %q in it", line, keySepFlag)}
				return
			}
			rec.Key, rec.Value = k, v
		} else {
			rec.Value = data
		}
		out <- inputRecord{rec: rec}
	}
	if err := scanner.Err(); err != nil {
		out <- inputRecord{err: fmt.Errorf("reading stdin: %w", err)}
	}
}

// lineProducer produces records asynchronously, prints their offsets in
// input order when verbose (acknowledgements of different partitions come
// back in any order), and keeps the first failure.
type lineProducer struct {
	cl       *kgo.Client
	tracker  *deliveryTracker
	messages *produceMessages
	verbose  bool
	noAcks   bool // acks=0: the broker answers nothing, so offsets are unknown
	out      io.Writer

	mu        sync.Mutex
	err       error
	printed   uint64                 // records whose line is printed
	delivered map[uint64]*kgo.Record // acknowledged, waiting for earlier ones
}

// run produces the input's records until it ends, a record fails or ctx
// ends; waiting on stdin never hides a record that is overdue.
func (p *lineProducer) run(ctx context.Context, input <-chan inputRecord) error {
	for p.firstError() == nil {
		select {
		case in, ok := <-input:
			if !ok {
				return nil
			}
			if in.err != nil {
				return in.err
			}
			p.produce(ctx, in.rec)
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return nil
}

// watch cancels ctx, with the tracker's error as the cause, once a record
// has waited longer than timeout for its acknowledgement.
func (p *lineProducer) watch(ctx context.Context, cancel context.CancelCauseFunc, timeout time.Duration) {
	tick := time.NewTicker(min(max(timeout/20, 10*time.Millisecond), 500*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			if err := p.tracker.overdue(now, timeout); err != nil {
				cancel(err)
				return
			}
		}
	}
}

// explain turns the error that ended the command into its message: a
// deadline names the records still waiting and why, a Kafka error code its
// name and meaning.
func (p *lineProducer) explain(ctx context.Context, err error, timeout time.Duration) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) && errors.Is(err, context.Canceled) {
		err = cause
	}
	if errors.Is(err, kgo.ErrRecordTimeout) || errors.Is(err, kgo.ErrRecordRetries) {
		err = p.tracker.notDelivered(timeout)
	}
	if errors.Is(err, kerr.UnknownTopicOrPartition) {
		// Auto-creation was asked for, so the server refused it (or the
		// partition given with -p does not exist).
		return fmt.Errorf("%w (the server did not create the topic: auto.create.topics.enable=false?)", describe(err))
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		if msg := p.messages.message(ke.Code); msg != "" {
			return serverError(err, msg)
		}
	}
	return describe(err)
}

func (p *lineProducer) produce(ctx context.Context, r *kgo.Record) {
	seq := p.tracker.sent(r, time.Now())
	p.cl.Produce(ctx, r, func(r *kgo.Record, err error) {
		p.tracker.done(r, err)
		p.mu.Lock()
		defer p.mu.Unlock()
		if err != nil {
			if p.err == nil {
				p.err = err
			}
			return
		}
		if !p.verbose {
			return
		}
		if p.delivered == nil {
			p.delivered = make(map[uint64]*kgo.Record)
		}
		p.delivered[seq] = r
		for {
			next, ok := p.delivered[p.printed]
			if !ok {
				return
			}
			delete(p.delivered, p.printed)
			p.printed++
			if p.noAcks {
				fmt.Fprintf(p.out, "partition %d offset unknown (acks=0)\n", next.Partition)
			} else {
				fmt.Fprintf(p.out, "partition %d offset %d\n", next.Partition, next.Offset)
			}
		}
	})
}

func (p *lineProducer) firstError() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}
