package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// txnDescription is one row of `txn describe`, also its --json shape. The
// start time and duration are null when no transaction is open.
type txnDescription struct {
	Coordinator     int32        `json:"coordinator"`
	TransactionalID string       `json:"transactional_id"`
	ProducerID      int64        `json:"producer_id"`
	ProducerEpoch   int16        `json:"producer_epoch"`
	State           string       `json:"state"`
	TimeoutMs       int32        `json:"timeout_ms"`
	StartTimeMs     *int64       `json:"start_time_ms"`
	DurationMs      *int64       `json:"duration_ms"`
	Partitions      []topicIndex `json:"partitions"`
}

// topicIndex is a topic partition in JSON output.
type topicIndex struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

var describeTxnHeaders = []string{"CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
	"TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationMs", "TopicPartitions"}

func newTxnDescribeCommand(conn *connection) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "describe TRANSACTIONAL-ID...",
		Short: "Show a transactional id's coordinator, producer id and epoch, state, timeout, open time and partitions",
		Example: `  sluice txn describe payments-tx
  sluice txn describe payments-tx audit-tx --json`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeTxnIDs(conn),
		RunE: func(cmd *cobra.Command, ids []string) error {
			s, err := openTxnSession(cmd, conn, keyDescribeTransactions)
			if err != nil {
				return err
			}
			defer s.done()
			described, err := describeTransactions(s.ctx, s.adm, ids)
			if err != nil && len(described) == 0 {
				return fmt.Errorf("describe transactions: %w", describe(err))
			}
			now := time.Now().UnixMilli()
			var rows []txnDescription
			var failed error
			for _, id := range ids {
				d, ok := described[id]
				switch {
				case !ok:
					failed = errors.Join(failed, fmt.Errorf("describe transaction %s: %w", id, describeMissing(err)))
				case d.Err != nil:
					failed = errors.Join(failed, fmt.Errorf("describe transaction %s: %w", id, describe(d.Err)))
				default:
					rows = append(rows, newTxnDescription(d, now))
				}
			}
			if err := printTxnDescriptions(cmd, rows, asJSON); err != nil {
				return err
			}
			return failed
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of descriptions")
	return cmd
}

// describeMissing explains an id with no answer: its shard failed.
func describeMissing(err error) error {
	if err != nil {
		return describe(err)
	}
	return errors.New("no answer for this transactional id")
}

// describeTransactions describes the ids at their coordinators, again while
// a coordinator is not ready (a new cluster creates __transaction_state on
// the first lookup and answers COORDINATOR_NOT_AVAILABLE meanwhile).
func describeTransactions(ctx context.Context, adm *kadm.Client, ids []string) (kadm.DescribedTransactions, error) {
	return retryCoordinator(ctx, func() (kadm.DescribedTransactions, error) {
		return adm.DescribeTransactions(ctx, ids...)
	}, func(ds kadm.DescribedTransactions) bool {
		for _, d := range ds {
			if coordinatorNotReady(d.Err) {
				return true
			}
		}
		return false
	})
}

func newTxnDescription(d kadm.DescribedTransaction, nowMs int64) txnDescription {
	row := txnDescription{
		Coordinator:     d.Coordinator,
		TransactionalID: d.TxnID,
		ProducerID:      d.ProducerID,
		ProducerEpoch:   d.ProducerEpoch,
		State:           d.State,
		TimeoutMs:       d.TimeoutMillis,
		Partitions:      []topicIndex{},
	}
	// Kafka answers -1 when no transaction is open.
	if d.StartTimestamp >= 0 {
		start, duration := d.StartTimestamp, nowMs-d.StartTimestamp
		row.StartTimeMs, row.DurationMs = &start, &duration
	}
	for _, t := range d.Topics.Sorted() {
		for _, p := range t.Partitions {
			row.Partitions = append(row.Partitions, topicIndex{Topic: t.Topic, Partition: p})
		}
	}
	return row
}

func printTxnDescriptions(cmd *cobra.Command, rows []txnDescription, asJSON bool) error {
	if asJSON {
		if rows == nil {
			rows = []txnDescription{}
		}
		return printJSON(cmd.OutOrStdout(), rows)
	}
	if len(rows) == 0 {
		return nil
	}
	table := make([][]string, 0, len(rows))
	for _, r := range rows {
		table = append(table, []string{
			fmt.Sprint(r.Coordinator), r.TransactionalID, fmt.Sprint(r.ProducerID), fmt.Sprint(r.ProducerEpoch),
			r.State, fmt.Sprint(r.TimeoutMs), optionalInt(r.StartTimeMs), optionalInt(r.DurationMs),
			partitionList(r.Partitions),
		})
	}
	return printTable(cmd.OutOrStdout(), describeTxnHeaders, table)
}

// optionalInt prints a missing value as Kafka's tool does: None.
func optionalInt(v *int64) string {
	if v == nil {
		return "None"
	}
	return strconv.FormatInt(*v, 10)
}

// partitionList prints partitions as Kafka's TopicPartition does, topic-N,
// comma-separated.
func partitionList(ps []topicIndex) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = fmt.Sprintf("%s-%d", p.Topic, p.Partition)
	}
	return strings.Join(names, ",")
}

// isTxnIDNotFound reports whether a describe says the id has no state.
func isTxnIDNotFound(err error) bool {
	return errors.Is(err, kerr.TransactionalIDNotFound)
}
