package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/sluice-io/sluice/internal/cli"
	"github.com/sluice-io/sluice/internal/commitlog/logdir"
	"github.com/sluice-io/sluice/internal/commitlog/metafile"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/node"
	"github.com/sluice-io/sluice/internal/vfs"
)

func newStorageCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "storage",
		Short: "Format log directories, as kafka-storage does",
	}
	cmd.AddCommand(newFormatCommand(), newRandomUUIDCommand())
	return cmd
}

func newFormatCommand() *cobra.Command {
	var clusterID, configFile string
	var overrides []string
	var ignoreFormatted bool
	var addScram, features []string
	var qf cli.QuorumFormat
	cmd := &cobra.Command{
		Use:   "format",
		Short: "Write meta.properties into every log directory of the configuration",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(configFile, overrides)
			if err != nil {
				return err
			}
			var records []metadata.Record
			for _, a := range addScram {
				r, err := cli.ParseAddScram(a)
				if err != nil {
					return fmt.Errorf("--add-scram: %w", err)
				}
				records = append(records, r)
			}
			for _, f := range features {
				r, err := node.FormatFeature(f)
				if err != nil {
					return fmt.Errorf("--feature: %w", err)
				}
				records = append(records, r)
			}
			dirs := cfg.LogDirs()
			if cfg.IsSet(config.MetadataLogDir) {
				dirs = append(dirs, cfg.String(config.MetadataLogDir))
			}
			// Format leaves a formatted dir as it is when told to ignore it:
			// note which ones, so the output does not claim to format them.
			skipped := formattedDirs(vfs.Default, dirs)
			if _, _, err := qf.BootstrapVoters(formatNode(cfg, kafka.UUID{})); err != nil {
				return err
			}
			if err := logdir.Format(vfs.Default, dirs, clusterID, cfg.NodeID(), ignoreFormatted); err != nil {
				return err
			}
			if err := writeBootstrapVoters(vfs.Default, cfg, qf, skipped); err != nil {
				return err
			}
			if len(records) > 0 {
				if err := node.WriteBootstrapRecords(vfs.Default, cfg, records); err != nil {
					return err
				}
			}
			for _, d := range dirs {
				if m, ok := skipped[d]; ok {
					fmt.Fprintf(cmd.OutOrStdout(), "Skipping %s: already formatted with cluster id %s and node id %d\n", d, m.ClusterID, m.NodeID)
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "Formatting %s with cluster id %s and node id %d\n", d, clusterID, cfg.NodeID())
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&clusterID, "cluster-id", "t", "", "the cluster id (make one with 'sluice storage random-uuid')")
	cmd.Flags().StringVarP(&configFile, "config", "c", "", "server.properties file")
	cmd.Flags().StringArrayVar(&overrides, "override", nil, "key=value overriding the config file (repeatable)")
	cmd.Flags().BoolVarP(&ignoreFormatted, "ignore-formatted", "g", false, "skip directories that are already formatted")
	cmd.Flags().StringArrayVarP(&addScram, "add-scram", "S", nil,
		"a SCRAM credential the cluster starts with, as kafka-storage's: 'SCRAM-SHA-256=[name=alice,password=alice-secret]' (repeatable; format every controller with the same ones)")
	cmd.Flags().StringArrayVarP(&features, "feature", "f", nil,
		"a feature level the cluster starts with, as kafka-storage's: 'sluice.directory.assignment.version=1' records replicas' log dirs (KIP-858; the cluster then cannot roll back to v0.1.0) (repeatable; format every controller with the same ones)")
	cmd.Flags().BoolVarP(&qf.Standalone, "standalone", "s", false, "start a dynamic quorum (controller.quorum.bootstrap.servers) with this controller as its only voter")
	cmd.Flags().StringVarP(&qf.InitialControllers, "initial-controllers", "I", "", "start a dynamic quorum with these voters: id@host:port:directoryid,...")
	cmd.Flags().BoolVarP(&qf.NoInitialControllers, "no-initial-controllers", "N", false, "a controller that joins an existing dynamic quorum (added with kafka-metadata-quorum add-controller)")
	cmd.MarkFlagRequired("cluster-id")
	cmd.MarkFlagRequired("config")
	return cmd
}

// formattedDirs are the dirs that hold a meta.properties already.
func formattedDirs(fsys vfs.FS, dirs []string) map[string]metafile.MetaProperties {
	out := map[string]metafile.MetaProperties{}
	for _, d := range dirs {
		if m, err := metafile.ReadMetaProperties(fsys, filepath.Join(d, metafile.MetaPropertiesFile)); err == nil {
			out[d] = m
		}
	}
	return out
}

func newRandomUUIDCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "random-uuid",
		Short: "Print a new random cluster id",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			id, err := kafka.RandomUUID()
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), id.String())
			return nil
		},
	}
}
