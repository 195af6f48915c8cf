package cli

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func newBenchCommand() *cobra.Command {
	conn := &connection{}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure produce or consume throughput and latency against any Kafka-compatible cluster",
		Example: `  sluice bench produce perf --count 1000000 --record-size 100
  sluice bench produce perf --duration 30s --rate 50000 --acks 1 --json
  sluice bench consume perf`,
	}
	addConnectionFlags(cmd, conn)
	cmd.AddCommand(newBenchProduceCommand(conn), newBenchConsumeCommand(conn))
	return cmd
}

// benchProduceOptions are the flags of `sluice bench produce`.
type benchProduceOptions struct {
	recordSize  int
	partitions  int32
	replication int16
	acks        string
	idempotent  bool
	linger      time.Duration
	batchSize   int32
	rate        float64
	duration    time.Duration
	count       int64
	compression string
	json        bool
}

func newBenchProduceCommand(conn *connection) *cobra.Command {
	o := &benchProduceOptions{}
	cmd := &cobra.Command{
		Use:   "produce TOPIC",
		Short: "Produce fixed-size records as fast as allowed; report records/s, MB/s and ack latency",
		Long: "Produce records of --record-size random bytes to TOPIC (created when missing, with --partitions) " +
			"for --duration or --count records, optionally limited to --rate records/s. Latency is the time from " +
			"handing a record to the client until its acknowledgement. A live progress line goes to stderr " +
			"when it is a terminal; the final table (or --json) goes to stdout.",
		Example: `  sluice bench produce perf --count 1000000 --record-size 100 --partitions 6
  sluice bench produce perf --duration 30s --rate 20000 --acks 1 --linger 0 --json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeTopics(conn, true),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBenchProduce(cmd, conn, o, args[0])
		},
	}
	f := cmd.Flags()
	f.IntVarP(&o.recordSize, "record-size", "s", 100, "value size in bytes")
	f.Int32VarP(&o.partitions, "partitions", "p", -1, "partitions when the topic is created (-1: broker default)")
	f.Int16VarP(&o.replication, "replication-factor", "r", -1, "replication factor when the topic is created (-1: broker default)")
	f.StringVar(&o.acks, "acks", "all", "acknowledgements: all (-1), 1 or 0")
	f.BoolVar(&o.idempotent, "idempotent", true, "idempotent producer (acks=all only)")
	f.DurationVar(&o.linger, "linger", 5*time.Millisecond, "how long a batch waits for more records (Java's linger.ms)")
	f.Int32Var(&o.batchSize, "batch-size", 16384, "maximum batch size in bytes (Java's batch.size)")
	f.Float64Var(&o.rate, "rate", 0, "records per second limit (0: unlimited)")
	f.DurationVarP(&o.duration, "duration", "d", 10*time.Second, "how long to produce (ignored when --count is set)")
	f.Int64VarP(&o.count, "count", "n", 0, "records to produce (0: produce for --duration)")
	f.StringVarP(&o.compression, "compression", "z", "none", "batch compression: none, gzip, snappy, lz4, zstd")
	f.BoolVar(&o.json, "json", false, "print the result as one JSON object")
	return cmd
}

func runBenchProduce(cmd *cobra.Command, conn *connection, o *benchProduceOptions, topic string) error {
	if o.recordSize < 0 {
		return fmt.Errorf("--record-size %d: must not be negative", o.recordSize)
	}
	if o.batchSize <= 0 {
		return fmt.Errorf("--batch-size %d: must be positive", o.batchSize)
	}
	opts, err := producerOptions(o.acks, o.compression, o.idempotent)
	if err != nil {
		return err
	}
	opts = append(opts, kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(o.linger),
		kgo.ProducerBatchMaxBytes(o.batchSize), kgo.RecordDeliveryTimeout(conn.timeout))
	ctx, stop := interruptible(cmd)
	defer stop()
	if err := ensureTopic(ctx, cmd, conn, topic, o.partitions, o.replication); err != nil {
		return err
	}
	cl, err := conn.client(cmd, opts...)
	if err != nil {
		return err
	}
	defer cl.Close()

	value := make([]byte, o.recordSize)
	rand.Read(value)
	stats := &benchStats{start: time.Now()}
	live := startProgress(cmd.ErrOrStderr(), stats)
	var firstErr error
	errOnce := make(chan error, 1)
	runCtx := ctx
	if o.count == 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, o.duration)
		defer cancel()
	}
	var interval time.Duration
	if o.rate > 0 {
		interval = time.Duration(float64(time.Second) / o.rate)
	}
	for i := int64(0); o.count == 0 || i < o.count; i++ {
		if runCtx.Err() != nil {
			break
		}
		if interval > 0 {
			if wait := time.Until(stats.start.Add(time.Duration(i) * interval)); wait > 0 {
				select {
				case <-runCtx.Done():
				case <-time.After(wait):
				}
				if runCtx.Err() != nil {
					break
				}
			}
		}
		sent := time.Now()
		cl.Produce(ctx, &kgo.Record{Value: value}, func(r *kgo.Record, err error) {
			if err != nil {
				stats.failed()
				select {
				case errOnce <- err:
				default:
				}
				return
			}
			stats.add(len(r.Value)+len(r.Key), time.Since(sent))
		})
		select {
		case firstErr = <-errOnce:
		default:
		}
		if firstErr != nil {
			break
		}
	}
	flushErr := cl.Flush(ctx)
	end := time.Now()
	live.finish()
	if firstErr == nil {
		select {
		case firstErr = <-errOnce:
		default:
		}
	}
	if err := stats.result("produce", topic, "produce to acknowledgement", end).write(cmd.OutOrStdout(), o.json); err != nil {
		return err
	}
	switch {
	case ctx.Err() != nil:
		// Interrupted: the records cut short are not failures of the server.
		return nil
	case firstErr != nil:
		return fmt.Errorf("produce to %s: %w", topic, describe(firstErr))
	case flushErr != nil:
		return fmt.Errorf("flush: %w", describe(flushErr))
	}
	return nil
}

// ensureTopic creates the topic unless it exists already.
func ensureTopic(ctx context.Context, cmd *cobra.Command, conn *connection, topic string, partitions int32, replication int16) error {
	adm, err := conn.admin(ctx, cmd)
	if err != nil {
		return err
	}
	defer adm.Close()
	rctx, cancel := conn.requestContext(ctx)
	defer cancel()
	resp, err := adm.CreateTopic(rctx, partitions, replication, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("create topic %s: %w", topic, serverError(err, resp.ErrMessage))
	}
	return nil
}
