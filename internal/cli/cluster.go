package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

func newClusterCommand() *cobra.Command {
	conn := &connection{}
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Show the cluster and read or change broker configs",
		Example: `  sluice cluster info
  sluice cluster config get
  sluice cluster config set log.retention.ms=3600000
  sluice cluster quorum
  sluice cluster brokers`,
	}
	addConnectionFlags(cmd, conn)
	config := &cobra.Command{
		Use:   "config",
		Short: "Read or change broker configs",
	}
	config.AddCommand(newClusterConfigGetCommand(conn), newClusterConfigSetCommand(conn))
	cmd.AddCommand(newClusterInfoCommand(conn), config, newClusterQuorumCommand(conn), newClusterBrokersCommand(conn),
		newClusterRebalanceCommand(conn))
	return cmd
}

func newClusterInfoCommand(conn *connection) *cobra.Command {
	return &cobra.Command{
		Use:     "info",
		Short:   "Print the cluster id, the controller and the brokers",
		Example: `  sluice cluster info --brokers 127.0.0.1:9092`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, adm, done, err := openAdmin(cmd, conn)
			if err != nil {
				return err
			}
			defer done()
			md, err := adm.BrokerMetadata(ctx)
			if err != nil {
				return fmt.Errorf("cluster metadata: %w", describe(err))
			}
			out := cmd.OutOrStdout()
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "CLUSTER\t%s\n", md.Cluster)
			fmt.Fprintf(tw, "CONTROLLER\t%d\n", md.Controller)
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintln(out)
			tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "BROKER\tHOST\tPORT\tRACK")
			for _, b := range md.Brokers {
				rack := "-"
				if b.Rack != nil {
					rack = *b.Rack
				}
				fmt.Fprintf(tw, "%d\t%s\t%d\t%s\n", b.NodeID, b.Host, b.Port, rack)
			}
			return tw.Flush()
		},
	}
}

func newClusterConfigGetCommand(conn *connection) *cobra.Command {
	var broker int32
	var all bool
	cmd := &cobra.Command{
		Use:   "get [KEY...]",
		Short: "Print broker configs (by default those not at their default value)",
		Long: "Print the configs of one broker (--broker, default: the first broker of the cluster). " +
			"With keys, print just those keys whatever their source; with --all, print every config.",
		Example: `  sluice cluster config get
  sluice cluster config get log.retention.ms num.partitions
  sluice cluster config get --all --broker 1`,
		RunE: func(cmd *cobra.Command, keys []string) error {
			ctx, adm, done, err := openAdmin(cmd, conn)
			if err != nil {
				return err
			}
			defer done()
			if broker < 0 {
				brokers, err := adm.ListBrokers(ctx)
				if err != nil {
					return fmt.Errorf("list brokers: %w", describe(err))
				}
				if len(brokers) == 0 {
					return errors.New("the cluster lists no brokers")
				}
				broker = brokers[0].NodeID
			}
			resp, err := adm.DescribeBrokerConfigs(ctx, broker)
			if err != nil {
				return fmt.Errorf("describe broker %d configs: %w", broker, describe(err))
			}
			rc, err := resp.On(strconv.Itoa(int(broker)), nil)
			if err != nil {
				return fmt.Errorf("describe broker %d configs: no answer for this broker", broker)
			}
			if rc.Err != nil {
				return fmt.Errorf("describe broker %d configs: %w", broker, serverError(rc.Err, rc.ErrMessage))
			}
			configs := rc.Configs
			if len(keys) > 0 {
				configs = pickConfigs(configs, keys)
				if len(configs) < len(keys) {
					return fmt.Errorf("broker %d has no config named %s", broker, missingKey(configs, keys))
				}
			}
			printConfigs(cmd.OutOrStdout(), configs, all || len(keys) > 0, "non-default configs: none")
			return nil
		},
	}
	cmd.Flags().Int32Var(&broker, "broker", -1, "broker id (-1: the first broker of the cluster)")
	cmd.Flags().BoolVar(&all, "all", false, "print every config, defaults included")
	return cmd
}

func newClusterConfigSetCommand(conn *connection) *cobra.Command {
	var brokers []int32
	var deletes []string
	cmd := &cobra.Command{
		Use:   "set [KEY=VALUE...]",
		Short: "Change dynamic broker configs, cluster-wide or for some brokers",
		Long: "Set (or with --delete, remove) dynamic broker configs through IncrementalAlterConfigs. " +
			"Without --broker the change is the cluster-wide default, as kafka-configs --entity-default does.",
		Example: `  sluice cluster config set log.retention.ms=3600000
  sluice cluster config set --broker 1 log.retention.bytes=1073741824
  sluice cluster config set --delete log.retention.ms`,
		RunE: func(cmd *cobra.Command, sets []string) error {
			alters, err := alterations(sets, deletes)
			if err != nil {
				return err
			}
			ctx, adm, done, err := openAdmin(cmd, conn)
			if err != nil {
				return err
			}
			defer done()
			resp, err := adm.AlterBrokerConfigs(ctx, alters, brokers...)
			if err != nil {
				if len(brokers) > 0 {
					return fmt.Errorf("alter configs of broker %s: %w", joinInt32s(brokers), describe(err))
				}
				return fmt.Errorf("alter broker configs: %w", describe(err))
			}
			return reportAlterations(cmd.OutOrStdout(), "broker", resp)
		},
	}
	cmd.Flags().Int32SliceVar(&brokers, "broker", nil, "broker ids to change; without it the cluster-wide default")
	hideEmptyDefault(cmd, "broker")
	cmd.Flags().StringArrayVar(&deletes, "delete", nil, "config key to remove (repeatable)")
	return cmd
}

// pickConfigs returns the configs named by keys, in the order of keys.
func pickConfigs(configs []kadm.Config, keys []string) []kadm.Config {
	byKey := make(map[string]kadm.Config, len(configs))
	for _, c := range configs {
		byKey[c.Key] = c
	}
	var out []kadm.Config
	for _, k := range keys {
		if c, ok := byKey[k]; ok {
			out = append(out, c)
		}
	}
	return out
}

// missingKey names the first key that pickConfigs did not find.
func missingKey(found []kadm.Config, keys []string) string {
	have := make(map[string]bool, len(found))
	for _, c := range found {
		have[c.Key] = true
	}
	for _, k := range keys {
		if !have[k] {
			return k
		}
	}
	return ""
}

// joinInt32s is ids comma-separated.
func joinInt32s(ids []int32) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Itoa(int(id))
	}
	return strings.Join(parts, ",")
}
