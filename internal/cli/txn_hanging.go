package cli

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

// hangingRow is one row of `txn find-hanging`, also its --json shape.
type hangingRow struct {
	Topic            string `json:"topic"`
	Partition        int32  `json:"partition"`
	ProducerID       int64  `json:"producer_id"`
	ProducerEpoch    int16  `json:"producer_epoch"`
	CoordinatorEpoch int32  `json:"coordinator_epoch"`
	StartOffset      int64  `json:"start_offset"`
	LastTimestamp    int64  `json:"last_timestamp"`
	DurationMinutes  int64  `json:"duration_minutes"`
}

var findHangingHeaders = []string{"Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch",
	"StartOffset", "LastTimestamp", "Duration(min)"}

// findHangingOptions are find-hanging's flags.
type findHangingOptions struct {
	topic         string
	partitions    []int32
	brokerID      int32
	maxTimeoutMin int
	asJSON        bool
}

func newTxnFindHangingCommand(conn *connection) *cobra.Command {
	o := &findHangingOptions{}
	cmd := &cobra.Command{
		Use:   "find-hanging",
		Short: "Find transactions open on a partition that their coordinator will never finish",
		Long: "Find hanging transactions as Kafka's kafka-transactions find-hanging does: a producer with a " +
			"transaction open on a partition (DescribeProducers) for longer than the maximum transaction " +
			"timeout, whose producer id no coordinator lists (ListTransactions), whose transactional id is " +
			"not found (DescribeTransactions), or whose transaction does not include that partition. " +
			"Without --topic or --broker-id every partition of the cluster is searched, 500 at a time. " +
			"Abort what it finds with `sluice txn abort`.",
		Example: `  sluice txn find-hanging --topic orders
  sluice txn find-hanging --broker-id 2 --max-transaction-timeout-minutes 5
  sluice txn find-hanging --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(o.partitions) > 0 && o.topic == "" {
				return errors.New("--partition needs --topic")
			}
			if o.maxTimeoutMin < 0 {
				return fmt.Errorf("--max-transaction-timeout-minutes %d: want 0 or more", o.maxTimeoutMin)
			}
			s, err := openTxnSession(cmd, conn, keyDescribeProducers, keyListTransactions, keyDescribeTransactions)
			if err != nil {
				return err
			}
			defer s.done()
			return runFindHanging(cmd, s, o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.topic, "topic", "", "search only this topic")
	fl.Int32SliceVarP(&o.partitions, "partition", "p", nil, "search only these partitions of --topic (repeatable, or comma-separated)")
	hideEmptyDefault(cmd, "partition")
	fl.Int32Var(&o.brokerID, "broker-id", -1, "search only partitions with a replica on this broker, asking it")
	fl.IntVar(&o.maxTimeoutMin, "max-transaction-timeout-minutes", 15, "only transactions whose producer wrote nothing for longer than this "+
		"(the largest transaction.timeout.ms in use; Kafka's default 15)")
	fl.IntVar(&o.maxTimeoutMin, "max-transaction-timeout", 15, "kafka-transactions' name for --max-transaction-timeout-minutes")
	fl.BoolVar(&o.asJSON, "json", false, "print a JSON array of hanging transactions")
	_ = fl.MarkHidden("max-transaction-timeout")
	cmd.MarkFlagsMutuallyExclusive("max-transaction-timeout-minutes", "max-transaction-timeout")
	_ = cmd.RegisterFlagCompletionFunc("topic", completeTopics(conn, false))
	return cmd
}

func runFindHanging(cmd *cobra.Command, s *txnSession, o *findHangingOptions) error {
	var topics []string
	if o.topic != "" {
		topics = []string{o.topic}
	}
	tps, err := resolvePartitions(s.ctx, s.adm, topics, o.partitions, o.brokerID)
	if err != nil {
		return fmt.Errorf("find hanging transactions: %w", err)
	}
	now := time.Now().UnixMilli()
	maxTimeoutMs := int64(o.maxTimeoutMin) * time.Minute.Milliseconds()
	var candidates []kadm.DescribedProducer
	var failed error
	for _, p := range describeProducers(s, tps, o.brokerID) {
		if p.Err != nil {
			failed = errors.Join(failed, fmt.Errorf("describe producers of %s-%d: %w", p.Topic, p.Partition, serverError(p.Err, p.ErrMessage)))
			continue
		}
		candidates = append(candidates, openTransactions(p, now, maxTimeoutMs)...)
	}
	hanging, err := hangingAmong(s, candidates)
	if err != nil {
		return errors.Join(failed, fmt.Errorf("find hanging transactions: %w", err))
	}
	if err := printHanging(cmd, hanging, now, o.asJSON); err != nil {
		return err
	}
	return failed
}

// openTransactions are a partition's producers with a transaction open and
// nothing written for longer than the maximum timeout: any coordinator
// would have ended such a transaction by now.
func openTransactions(p kadm.DescribedProducersPartition, nowMs, maxTimeoutMs int64) []kadm.DescribedProducer {
	var out []kadm.DescribedProducer
	for _, dp := range p.ActiveProducers.Sorted() {
		if dp.CurrentTxnStartOffset >= 0 && nowMs-dp.LastTimestamp > maxTimeoutMs {
			out = append(out, dp)
		}
	}
	return out
}

// hangingAmong asks the coordinators about the candidates' producer ids
// and keeps those they will not finish.
func hangingAmong(s *txnSession, candidates []kadm.DescribedProducer) ([]kadm.DescribedProducer, error) {
	if len(candidates) == 0 {
		return nil, nil
	}
	var pids []int64
	for _, c := range candidates {
		if !slices.Contains(pids, c.ProducerID) {
			pids = append(pids, c.ProducerID)
		}
	}
	listed, err := listTransactions(s.ctx, s.cl, listFilter{producerIDs: pids, durationMs: -1})
	if err != nil {
		return nil, fmt.Errorf("list transactions of %d producers: %w", len(pids), err)
	}
	txnIDs := make(map[int64]string)
	var ids []string
	for _, l := range listed.listings {
		// A coordinator may answer more than was asked; Kafka's tool ignores it.
		if slices.Contains(pids, l.ProducerID) {
			txnIDs[l.ProducerID] = l.TransactionalID
			ids = append(ids, l.TransactionalID)
		}
	}
	descriptions := make(map[string]*kadm.DescribedTransaction)
	if len(ids) > 0 {
		described, err := describeTransactions(s.ctx, s.adm, ids)
		if err != nil {
			return nil, fmt.Errorf("describe %d transactions: %w", len(ids), describe(err))
		}
		for _, id := range ids {
			d, ok := described[id]
			switch {
			case !ok:
				return nil, fmt.Errorf("describe transaction %s: no answer for this transactional id", id)
			case isTxnIDNotFound(d.Err):
				descriptions[id] = nil
			case d.Err != nil:
				return nil, fmt.Errorf("describe transaction %s: %w", id, describe(d.Err))
			default:
				descriptions[id] = &d
			}
		}
	}
	return filterHanging(candidates, txnIDs, descriptions), nil
}

// filterHanging is Kafka's rule: an open transaction hangs when no
// coordinator lists its producer id, when its transactional id has no
// state, or when the coordinator's transaction does not include the
// partition (it lists the partitions of an ongoing transaction and those
// still waiting for markers, so the marker for any other never comes).
func filterHanging(candidates []kadm.DescribedProducer, txnIDs map[int64]string, descriptions map[string]*kadm.DescribedTransaction) []kadm.DescribedProducer {
	var out []kadm.DescribedProducer
	for _, c := range candidates {
		id, ok := txnIDs[c.ProducerID]
		if !ok {
			out = append(out, c)
			continue
		}
		d := descriptions[id]
		if d == nil || !d.Topics.Lookup(c.Topic, c.Partition) {
			out = append(out, c)
		}
	}
	return out
}

func printHanging(cmd *cobra.Command, hanging []kadm.DescribedProducer, nowMs int64, asJSON bool) error {
	rows := make([]hangingRow, 0, len(hanging))
	for _, h := range hanging {
		rows = append(rows, hangingRow{
			Topic: h.Topic, Partition: h.Partition, ProducerID: h.ProducerID, ProducerEpoch: h.ProducerEpoch,
			CoordinatorEpoch: h.CoordinatorEpoch, StartOffset: h.CurrentTxnStartOffset, LastTimestamp: h.LastTimestamp,
			DurationMinutes: (nowMs - h.LastTimestamp) / time.Minute.Milliseconds(),
		})
	}
	if asJSON {
		return printJSON(cmd.OutOrStdout(), rows)
	}
	table := make([][]string, 0, len(rows))
	for _, r := range rows {
		table = append(table, []string{r.Topic, fmt.Sprint(r.Partition), fmt.Sprint(r.ProducerID), fmt.Sprint(r.ProducerEpoch),
			fmt.Sprint(r.CoordinatorEpoch), fmt.Sprint(r.StartOffset), fmt.Sprint(r.LastTimestamp), fmt.Sprint(r.DurationMinutes)})
	}
	return printTable(cmd.OutOrStdout(), findHangingHeaders, table)
}
