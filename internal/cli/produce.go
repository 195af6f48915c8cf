package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"
)

// maxInputRecord bounds one record read from stdin; a larger one is an error
// rather than an unbounded buffer.
const maxInputRecord = 16 << 20

func newProduceCommand() *cobra.Command {
	conn := &connection{}
	var (
		delimiter, keySeparator, acks, compression string
		headers                                    []string
		partition                                  int32
		verbose                                    bool
	)
	cmd := &cobra.Command{
		Use:   "produce TOPIC",
		Short: "Write records read from stdin (one per line, or per --delimiter) to a topic",
		Long: "Reads stdin until end of input and produces one record per line (or per --delimiter). " +
			"With --key-separator each record is KEY<sep>VALUE. The command returns once every record is " +
			"acknowledged, or with the first error.",
		Example: `  seq 1 100 | sluice produce numbers
  printf 'k1:v1\nk2:v2\n' | sluice produce orders --key-separator : -H source=cli -v
  cat payloads.bin | sluice produce blobs --delimiter '\0' --acks 1 --compression zstd`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeTopics(conn, true),
		RunE: func(cmd *cobra.Command, args []string) error {
			topic := args[0]
			delim, err := unescape(delimiter)
			if err != nil || delim == "" {
				return fmt.Errorf("--delimiter %q: want a non-empty string (escapes \\n \\t \\r \\0 allowed)", delimiter)
			}
			keySep, err := unescape(keySeparator)
			if err != nil {
				return fmt.Errorf("--key-separator %q: %w", keySeparator, err)
			}
			hdrs, err := recordHeaders(headers)
			if err != nil {
				return err
			}
			opts, err := producerOptions(acks, compression, true)
			if err != nil {
				return err
			}
			// A record that cannot be delivered within the timeout fails the
			// command instead of being retried for ever.
			opts = append(opts, kgo.DefaultProduceTopic(topic), kgo.RecordDeliveryTimeout(conn.timeout))
			if partition >= 0 {
				opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
			}
			cl, err := conn.client(cmd, opts...)
			if err != nil {
				return err
			}
			defer cl.Close()
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			if err := conn.ping(ctx, cmd, cl); err != nil {
				return err
			}
			p := &lineProducer{cl: cl, verbose: verbose, noAcks: acks == "0", out: cmd.OutOrStdout()}
			scanner := bufio.NewScanner(cmd.InOrStdin())
			scanner.Buffer(make([]byte, 64<<10), maxInputRecord)
			scanner.Split(splitOn([]byte(delim)))
			line := 0
			for scanner.Scan() && p.firstError() == nil {
				line++
				r := &kgo.Record{Headers: hdrs, Partition: partition}
				data := bytes.Clone(scanner.Bytes())
				if keySep != "" {
					k, v, ok := bytes.Cut(data, []byte(keySep))
					if !ok {
						return fmt.Errorf("record %d: no key separator %q in it", line, keySeparator)
					}
					r.Key, r.Value = k, v
				} else {
					r.Value = data
				}
				p.produce(ctx, r)
			}
			if err := scanner.Err(); err != nil {
				return fmt.Errorf("reading stdin: %w", err)
			}
			if err := cl.Flush(ctx); err != nil {
				return fmt.Errorf("flush: %w", describe(err))
			}
			if err := p.firstError(); err != nil {
				return fmt.Errorf("produce to %s: %w", topic, describe(err))
			}
			return nil
		},
	}
	addConnectionFlags(cmd, conn)
	f := cmd.Flags()
	f.StringVar(&delimiter, "delimiter", `\n`, "record delimiter in the input (escapes \\n \\t \\r \\0)")
	f.StringVarP(&keySeparator, "key-separator", "k", "", "split each record into KEY<sep>VALUE at the first separator")
	f.StringArrayVarP(&headers, "header", "H", nil, "header key=value added to every record (repeatable)")
	f.Int32VarP(&partition, "partition", "p", -1, "partition to write to (-1: the default partitioner, murmur2 on the key)")
	f.StringVar(&acks, "acks", "all", "acknowledgements: all (-1), 1 or 0")
	f.StringVarP(&compression, "compression", "z", "none", "batch compression: none, gzip, snappy, lz4, zstd")
	f.BoolVarP(&verbose, "verbose", "v", false, "print the partition and offset of every record")
	return cmd
}

// lineProducer produces records asynchronously, prints their offsets in
// input order when verbose (acknowledgements of different partitions come
// back in any order), and keeps the first failure.
type lineProducer struct {
	cl      *kgo.Client
	verbose bool
	noAcks  bool // acks=0: the broker answers nothing, so offsets are unknown
	out     io.Writer

	mu        sync.Mutex
	err       error
	sent      uint64                 // records handed to the client
	printed   uint64                 // records whose line is printed
	delivered map[uint64]*kgo.Record // acknowledged, waiting for earlier ones
}

func (p *lineProducer) produce(ctx context.Context, r *kgo.Record) {
	p.mu.Lock()
	seq := p.sent
	p.sent++
	p.mu.Unlock()
	p.cl.Produce(ctx, r, func(r *kgo.Record, err error) {
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

// producerOptions maps the --acks and --compression flags to kgo options.
// Idempotence needs acks=all; it is switched off for weaker acks, and on
// request (idempotent=false).
func producerOptions(acks, compression string, idempotent bool) ([]kgo.Opt, error) {
	var opts []kgo.Opt
	switch strings.ToLower(acks) {
	case "all", "-1":
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
		if !idempotent {
			opts = append(opts, kgo.DisableIdempotentWrite())
		}
	case "1":
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	case "0":
		opts = append(opts, kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite())
	default:
		return nil, fmt.Errorf("--acks %q: want all, -1, 1 or 0", acks)
	}
	var codec kgo.CompressionCodec
	switch strings.ToLower(compression) {
	case "none", "":
		codec = kgo.NoCompression()
	case "gzip":
		codec = kgo.GzipCompression()
	case "snappy":
		codec = kgo.SnappyCompression()
	case "lz4":
		codec = kgo.Lz4Compression()
	case "zstd":
		codec = kgo.ZstdCompression()
	default:
		return nil, fmt.Errorf("--compression %q: want none, gzip, snappy, lz4 or zstd", compression)
	}
	return append(opts, kgo.ProducerBatchCompression(codec)), nil
}

// recordHeaders parses -H key=value flags.
func recordHeaders(flags []string) ([]kgo.RecordHeader, error) {
	var out []kgo.RecordHeader
	for _, h := range flags {
		k, v, err := splitKeyValue("-H", h)
		if err != nil {
			return nil, err
		}
		out = append(out, kgo.RecordHeader{Key: k, Value: []byte(v)})
	}
	return out, nil
}

// unescape interprets the escapes a shell user types for separators:
// \n, \t, \r, \0 and \\.
func unescape(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 == len(s) {
			return "", errors.New("trailing backslash")
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '0':
			b.WriteByte(0)
		case '\\':
			b.WriteByte('\\')
		default:
			return "", fmt.Errorf("unknown escape \\%c", s[i])
		}
	}
	return b.String(), nil
}

// splitOn is a bufio.SplitFunc cutting the input at every delim; a final
// piece without a trailing delimiter is a record too.
func splitOn(delim []byte) bufio.SplitFunc {
	return func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.Index(data, delim); i >= 0 {
			return i + len(delim), data[:i], nil
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	}
}
