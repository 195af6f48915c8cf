package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/sluice-io/sluice/internal/api"
)

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print Sluice's version and the Kafka release it imitates",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			revision := "unknown"
			if info, ok := debug.ReadBuildInfo(); ok {
				for _, s := range info.Settings {
					if s.Key == "vcs.revision" {
						revision = s.Value
					}
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "sluice (revision %s), Kafka protocol of Apache Kafka %s\n", revision, api.PinnedRelease().Name)
		},
	}
}
