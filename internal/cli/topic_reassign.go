package cli

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

// newTopicReassignCommand moves a partition to other brokers (KIP-455
// AlterPartitionReassignments), cancels a move, or lists the moves in
// progress. The move itself runs in the cluster: new replicas catch up,
// join the ISR, and only then do the old ones leave.
func newTopicReassignCommand(conn *connection) *cobra.Command {
	var partition int32
	var replicas []int32
	var cancel, list bool
	cmd := &cobra.Command{
		Use:   "reassign TOPIC --partition N (--replicas IDS | --cancel) | reassign --list [TOPIC]",
		Short: "Move a partition to other brokers, cancel a move, or list moves in progress",
		Long: `Move a partition to other brokers: the new replicas copy the partition from its
leader and join the in-sync replicas; then the controller drops the replicas that are
not in the new list (electing another leader if the leader is one of them), and those
brokers delete their copy. The command returns once the move has started; --list shows
what is still moving. --cancel reverts a move in progress.`,
		Example: `  sluice topic reassign orders --partition 0 --replicas 2,3,4
  sluice topic reassign --list
  sluice topic reassign orders --partition 0 --cancel`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeTopics(conn, true),
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				if cmd.Flags().Changed("replicas") || cancel || cmd.Flags().Changed("partition") {
					return errors.New("--list takes no --partition, --replicas or --cancel")
				}
				return listReassignments(cmd, conn, args)
			}
			if len(args) != 1 {
				return errors.New("give the topic to reassign (or --list)")
			}
			if !cmd.Flags().Changed("partition") {
				return errors.New("--partition is required")
			}
			if cancel == cmd.Flags().Changed("replicas") {
				return errors.New("give either --replicas or --cancel")
			}
			if !cancel && len(replicas) == 0 {
				return errors.New("--replicas needs at least one broker id")
			}
			topic := args[0]
			ctx, adm, done, err := openAdmin(cmd, conn)
			if err != nil {
				return err
			}
			defer done()
			var req kadm.AlterPartitionAssignmentsReq
			if cancel {
				req.CancelAssign(topic, partition)
			} else {
				req.Assign(topic, partition, replicas)
			}
			resp, err := adm.AlterPartitionAssignments(ctx, req)
			if err != nil {
				return fmt.Errorf("reassign %s-%d: %w", topic, partition, describe(err))
			}
			r, ok := resp[topic][partition]
			switch {
			case !ok:
				return fmt.Errorf("reassign %s-%d: no answer for this partition", topic, partition)
			case r.Err != nil:
				return fmt.Errorf("reassign %s-%d: %w", topic, partition, serverError(r.Err, r.ErrMessage))
			case cancel:
				fmt.Fprintf(cmd.OutOrStdout(), "cancelled the reassignment of %s-%d\n", topic, partition)
			default:
				fmt.Fprintf(cmd.OutOrStdout(), "reassigning %s-%d to replicas %v (follow it with --list)\n", topic, partition, replicas)
			}
			return nil
		},
	}
	cmd.Flags().Int32VarP(&partition, "partition", "p", 0, "the partition to move")
	cmd.Flags().Int32SliceVar(&replicas, "replicas", nil, "the target broker ids, comma-separated; the first is the preferred leader")
	hideEmptyDefault(cmd, "replicas")
	cmd.Flags().BoolVar(&cancel, "cancel", false, "revert the partition's reassignment in progress")
	cmd.Flags().BoolVar(&list, "list", false, "list the reassignments in progress (of TOPIC, or of every topic)")
	return cmd
}

// listReassignments prints the partitions being moved, with the replicas
// joining and leaving.
func listReassignments(cmd *cobra.Command, conn *connection, topics []string) error {
	ctx, adm, done, err := openAdmin(cmd, conn)
	if err != nil {
		return err
	}
	defer done()
	meta, err := adm.ListTopicsWithInternal(ctx, topics...)
	if err != nil {
		return fmt.Errorf("list topics: %w", describe(err))
	}
	set := kadm.TopicsSet{}
	for _, t := range meta.Sorted() {
		if t.Err != nil {
			return fmt.Errorf("topic %s: %w", t.Topic, describe(t.Err))
		}
		for _, p := range t.Partitions.Numbers() {
			set.Add(t.Topic, p)
		}
	}
	moving, err := adm.ListPartitionReassignments(ctx, set)
	if err != nil {
		return fmt.Errorf("list reassignments: %w", describe(err))
	}
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tREPLICAS\tADDING\tREMOVING")
	for _, r := range moving.Sorted() {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", r.Topic, r.Partition, ids(r.Replicas), ids(r.AddingReplicas), ids(r.RemovingReplicas))
	}
	return tw.Flush()
}
