package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// producerBatch is how many partitions one DescribeProducers asks about,
// Kafka's find-hanging batch, so a large cluster is not asked at once.
const producerBatch = 500

// producerRow is one row of `txn describe-producers`, also its --json
// shape; the transaction start offset is null when none is open.
type producerRow struct {
	Topic                 string `json:"topic"`
	Partition             int32  `json:"partition"`
	ProducerID            int64  `json:"producer_id"`
	ProducerEpoch         int16  `json:"producer_epoch"`
	CoordinatorEpoch      int32  `json:"coordinator_epoch"`
	LastSequence          int32  `json:"last_sequence"`
	LastTimestamp         int64  `json:"last_timestamp"`
	CurrentTxnStartOffset *int64 `json:"current_transaction_start_offset"`
}

// Kafka's headings, after the partition: Kafka's tool describes one.
var describeProducersHeaders = []string{"Partition", "ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch",
	"LastSequence", "LastTimestamp", "CurrentTransactionStartOffset"}

func newTxnDescribeProducersCommand(conn *connection) *cobra.Command {
	var partitions []int32
	var brokerID int32
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "describe-producers TOPIC",
		Short: "Show the producers each partition of a topic knows: epoch, last sequence and timestamp, open transaction",
		Long: "Show the active producers of a topic's partitions (DescribeProducers, asked of each partition's " +
			"leader, or of --broker-id): producer id and epoch, the coordinator epoch of its last marker, " +
			"its last sequence and timestamp, and the first offset of its open transaction.",
		Example: `  sluice txn describe-producers orders
  sluice txn describe-producers orders -p 0 -p 2
  sluice txn describe-producers orders -p 0 --broker-id 2    # a follower's view`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeTopics(conn, true),
		RunE: func(cmd *cobra.Command, args []string) error {
			topic := args[0]
			s, err := openTxnSession(cmd, conn, keyDescribeProducers)
			if err != nil {
				return err
			}
			defer s.done()
			tps, err := resolvePartitions(s.ctx, s.adm, []string{topic}, partitions, -1)
			if err != nil {
				return fmt.Errorf("describe producers of %s: %w", topic, err)
			}
			described := describeProducers(s, tps, brokerID)
			var rows []producerRow
			var failed error
			for _, p := range described {
				if p.Err != nil {
					failed = errors.Join(failed, fmt.Errorf("describe producers of %s-%d: %w", p.Topic, p.Partition, serverError(p.Err, p.ErrMessage)))
					continue
				}
				for _, dp := range p.ActiveProducers.Sorted() {
					rows = append(rows, newProducerRow(dp))
				}
			}
			if err := printProducers(cmd, rows, asJSON); err != nil {
				return err
			}
			return failed
		},
	}
	fl := cmd.Flags()
	fl.Int32SliceVarP(&partitions, "partition", "p", nil, "only these partitions (repeatable, or comma-separated); without it all")
	hideEmptyDefault(cmd, "partition")
	fl.Int32Var(&brokerID, "broker-id", -1, "ask this broker (a replica) instead of each partition's leader")
	fl.BoolVar(&asJSON, "json", false, "print a JSON array of producers")
	return cmd
}

func newProducerRow(p kadm.DescribedProducer) producerRow {
	row := producerRow{
		Topic:            p.Topic,
		Partition:        p.Partition,
		ProducerID:       p.ProducerID,
		ProducerEpoch:    p.ProducerEpoch,
		CoordinatorEpoch: p.CoordinatorEpoch,
		LastSequence:     p.LastSequence,
		LastTimestamp:    p.LastTimestamp,
	}
	if p.CurrentTxnStartOffset >= 0 {
		start := p.CurrentTxnStartOffset
		row.CurrentTxnStartOffset = &start
	}
	return row
}

func printProducers(cmd *cobra.Command, rows []producerRow, asJSON bool) error {
	if asJSON {
		if rows == nil {
			rows = []producerRow{}
		}
		return printJSON(cmd.OutOrStdout(), rows)
	}
	table := make([][]string, 0, len(rows))
	for _, r := range rows {
		table = append(table, []string{fmt.Sprint(r.Partition), fmt.Sprint(r.ProducerID), fmt.Sprint(r.ProducerEpoch),
			fmt.Sprint(r.CoordinatorEpoch), fmt.Sprint(r.LastSequence), fmt.Sprint(r.LastTimestamp),
			optionalInt(r.CurrentTxnStartOffset)})
	}
	return printTable(cmd.OutOrStdout(), describeProducersHeaders, table)
}

// resolvePartitions checks the topics and partitions exist and returns them
// as a set: every partition when none is named, every topic (internal ones
// too, as Kafka's find-hanging) when no topic is. With replicaOf >= 0 only
// partitions with a replica on that broker are kept.
func resolvePartitions(ctx context.Context, adm *kadm.Client, topics []string, partitions []int32, replicaOf int32) (kadm.TopicsSet, error) {
	md, err := adm.Metadata(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", describe(err))
	}
	if len(topics) == 0 {
		topics = md.Topics.Names()
	}
	set := make(kadm.TopicsSet)
	for _, topic := range topics {
		td, ok := md.Topics[topic]
		if !ok {
			return nil, fmt.Errorf("topic %s: no metadata for this topic", topic)
		}
		if td.Err != nil {
			return nil, fmt.Errorf("topic %s: %w", topic, describe(td.Err))
		}
		for _, p := range partitions {
			if _, ok := td.Partitions[p]; !ok {
				return nil, fmt.Errorf("partition %s-%d: %w (the topic has %d partitions)",
					topic, p, describe(kerr.UnknownTopicOrPartition), len(td.Partitions))
			}
		}
		for _, p := range td.Partitions.Sorted() {
			if len(partitions) > 0 && !slices.Contains(partitions, p.Partition) {
				continue
			}
			if replicaOf >= 0 && !slices.Contains(p.Replicas, replicaOf) {
				continue
			}
			set.Add(topic, p.Partition)
		}
	}
	return set, nil
}

// describeProducers asks DescribeProducers for the partitions, in batches,
// of each partition's leader (kadm), or of one broker (brokerID >= 0, a
// request kadm has no option for). Every partition asked for is in the
// answer, sorted, with the error of its batch when it got none.
func describeProducers(s *txnSession, tps kadm.TopicsSet, brokerID int32) []kadm.DescribedProducersPartition {
	var out []kadm.DescribedProducersPartition
	for _, batch := range splitTopicsSet(tps, producerBatch) {
		var got kadm.DescribedProducersTopics
		var err error
		if brokerID >= 0 {
			got, err = describeProducersOn(s, batch, brokerID)
		} else {
			got, err = s.adm.DescribeProducers(s.ctx, batch)
		}
		batch.Each(func(t string, p int32) {
			dp, ok := got[t].Partitions[p]
			if !ok {
				dp = kadm.DescribedProducersPartition{Topic: t, Partition: p, Err: describeMissing(err)}
			}
			out = append(out, dp)
		})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}

// describeProducersOn sends one DescribeProducers to the given broker and
// returns its answer in kadm's shape.
func describeProducersOn(s *txnSession, tps kadm.TopicsSet, brokerID int32) (kadm.DescribedProducersTopics, error) {
	req := kmsg.NewPtrDescribeProducersRequest()
	for _, t := range tps.Sorted() {
		rt := kmsg.NewDescribeProducersRequestTopic()
		rt.Topic, rt.Partitions = t.Topic, t.Partitions
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(s.ctx, s.cl.Broker(int(brokerID)))
	if err != nil {
		return nil, fmt.Errorf("broker %d: %w", brokerID, describe(err))
	}
	out := make(kadm.DescribedProducersTopics)
	for _, rt := range resp.Topics {
		dt := kadm.DescribedProducersTopic{Topic: rt.Topic, Partitions: make(kadm.DescribedProducersPartitions)}
		for _, rp := range rt.Partitions {
			dp := kadm.DescribedProducersPartition{
				Leader: brokerID, Topic: rt.Topic, Partition: rp.Partition,
				ActiveProducers: make(kadm.DescribedProducers),
				Err:             kerr.ErrorForCode(rp.ErrorCode),
			}
			if rp.ErrorMessage != nil {
				dp.ErrMessage = *rp.ErrorMessage
			}
			for _, ap := range rp.ActiveProducers {
				dp.ActiveProducers[ap.ProducerID] = kadm.DescribedProducer{
					Leader: brokerID, Topic: rt.Topic, Partition: rp.Partition,
					ProducerID: ap.ProducerID, ProducerEpoch: int16(ap.ProducerEpoch),
					LastSequence: ap.LastSequence, LastTimestamp: ap.LastTimestamp,
					CoordinatorEpoch: ap.CoordinatorEpoch, CurrentTxnStartOffset: ap.CurrentTxnStartOffset,
				}
			}
			dt.Partitions[rp.Partition] = dp
		}
		out[rt.Topic] = dt
	}
	return out, nil
}

// splitTopicsSet cuts a set into sets of at most n partitions, in order.
func splitTopicsSet(tps kadm.TopicsSet, n int) []kadm.TopicsSet {
	var out []kadm.TopicsSet
	cur, size := make(kadm.TopicsSet), 0
	for _, t := range tps.Sorted() {
		for _, p := range t.Partitions {
			if size == n {
				out = append(out, cur)
				cur, size = make(kadm.TopicsSet), 0
			}
			cur.Add(t.Topic, p)
			size++
		}
	}
	if size > 0 {
		out = append(out, cur)
	}
	return out
}
