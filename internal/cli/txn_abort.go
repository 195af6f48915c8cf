package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

// abortSpec is the transaction to abort, Kafka's AbortTransactionSpec; also
// the --json shape of what was aborted.
type abortSpec struct {
	Topic            string `json:"topic"`
	Partition        int32  `json:"partition"`
	ProducerID       int64  `json:"producer_id"`
	ProducerEpoch    int16  `json:"producer_epoch"`
	CoordinatorEpoch int32  `json:"coordinator_epoch"`
}

func newTxnAbortCommand(conn *connection) *cobra.Command {
	var spec abortSpec
	var startOffset int64
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "abort --topic TOPIC --partition N (--start-offset OFFSET | --producer-id ID --producer-epoch E --coordinator-epoch C)",
		Short: "Abort a hanging transaction on one partition by writing its ABORT marker there",
		Long: "Abort a transaction open on one partition, as Kafka's Admin.abortTransaction does: an ABORT " +
			"marker is written to the partition by its leader (WriteTxnMarkers), which closes the transaction " +
			"there and lets the last stable offset move on. --start-offset finds the producer whose open " +
			"transaction starts at that offset (DescribeProducers); otherwise name the producer id and epoch " +
			"and the coordinator epoch, as `txn find-hanging` prints them (a negative coordinator epoch is " +
			"sent as 0, as Kafka's tool does). Only for hanging transactions: a transaction its coordinator " +
			"still runs is aborted on this partition alone.",
		Example: `  sluice txn find-hanging --topic orders
  sluice txn abort --topic orders --partition 0 --start-offset 1234
  sluice txn abort --topic orders --partition 0 --producer-id 4001 --producer-epoch 3 --coordinator-epoch 7`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			keys := []int16{keyWriteTxnMarkers}
			byOffset := cmd.Flags().Changed("start-offset")
			if byOffset {
				keys = append(keys, keyDescribeProducers)
			}
			s, err := openTxnSession(cmd, conn, keys...)
			if err != nil {
				return err
			}
			defer s.done()
			if _, err := resolvePartitions(s.ctx, s.adm, []string{spec.Topic}, []int32{spec.Partition}, -1); err != nil {
				return fmt.Errorf("abort transaction: %w", err)
			}
			if byOffset {
				if spec, err = abortSpecAt(s, spec.Topic, spec.Partition, startOffset); err != nil {
					return err
				}
			}
			// A transaction opened by a new producer that hung before its
			// first marker shows coordinator epoch -1; 0 is at or below any
			// coordinator's epoch (Kafka's tool does the same).
			spec.CoordinatorEpoch = max(spec.CoordinatorEpoch, 0)
			if err := abortTransaction(s, spec); err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), spec)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "aborted the transaction of producer %d (epoch %d, coordinator epoch %d) on %s-%d\n",
				spec.ProducerID, spec.ProducerEpoch, spec.CoordinatorEpoch, spec.Topic, spec.Partition)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&spec.Topic, "topic", "", "the transaction's topic")
	fl.Int32Var(&spec.Partition, "partition", 0, "the transaction's partition")
	fl.Int64Var(&startOffset, "start-offset", -1, "the first offset of the open transaction (CurrentTransactionStartOffset)")
	fl.Int64Var(&spec.ProducerID, "producer-id", -1, "the transaction's producer id")
	fl.Int16Var(&spec.ProducerEpoch, "producer-epoch", -1, "the transaction's producer epoch")
	fl.Int32Var(&spec.CoordinatorEpoch, "coordinator-epoch", -1, "the coordinator epoch of the producer's last marker on the partition")
	fl.BoolVar(&asJSON, "json", false, "print what was aborted as one JSON object")
	_ = cmd.MarkFlagRequired("topic")
	_ = cmd.MarkFlagRequired("partition")
	cmd.MarkFlagsOneRequired("start-offset", "producer-id")
	cmd.MarkFlagsRequiredTogether("producer-id", "producer-epoch", "coordinator-epoch")
	for _, f := range []string{"producer-id", "producer-epoch", "coordinator-epoch"} {
		cmd.MarkFlagsMutuallyExclusive("start-offset", f)
	}
	_ = cmd.RegisterFlagCompletionFunc("topic", completeTopics(conn, false))
	return cmd
}

// abortSpecAt finds the producer whose open transaction on the partition
// starts at offset, as Kafka's tool does with --start-offset.
func abortSpecAt(s *txnSession, topic string, partition int32, offset int64) (abortSpec, error) {
	tps := make(kadm.TopicsSet)
	tps.Add(topic, partition)
	p := describeProducers(s, tps, -1)[0]
	if p.Err != nil {
		return abortSpec{}, fmt.Errorf("describe producers of %s-%d: %w", topic, partition, serverError(p.Err, p.ErrMessage))
	}
	for _, dp := range p.ActiveProducers.Sorted() {
		if dp.CurrentTxnStartOffset == offset {
			return abortSpec{Topic: topic, Partition: partition, ProducerID: dp.ProducerID,
				ProducerEpoch: dp.ProducerEpoch, CoordinatorEpoch: dp.CoordinatorEpoch}, nil
		}
	}
	return abortSpec{}, fmt.Errorf("no open transaction starts at offset %d on %s-%d (see `sluice txn describe-producers %s -p %d`)",
		offset, topic, partition, topic, partition)
}

// abortTransaction writes the ABORT marker at the partition's leader
// (kgo routes WriteTxnMarkers there and retries a moved leader).
func abortTransaction(s *txnSession, spec abortSpec) error {
	tps := make(kadm.TopicsSet)
	tps.Add(spec.Topic, spec.Partition)
	resp, err := s.adm.WriteTxnMarkers(s.ctx, kadm.TxnMarkers{
		ProducerID:       spec.ProducerID,
		ProducerEpoch:    spec.ProducerEpoch,
		Commit:           false,
		CoordinatorEpoch: spec.CoordinatorEpoch,
		Topics:           tps,
	})
	what := fmt.Sprintf("abort the transaction of producer %d (epoch %d, coordinator epoch %d) on %s-%d",
		spec.ProducerID, spec.ProducerEpoch, spec.CoordinatorEpoch, spec.Topic, spec.Partition)
	p, ok := resp[spec.ProducerID].Topics[spec.Topic].Partitions[spec.Partition]
	switch {
	case !ok:
		return fmt.Errorf("%s: %w", what, describeMissing(err))
	case p.Err != nil:
		return fmt.Errorf("%s: %w", what, describe(p.Err))
	}
	return nil
}
