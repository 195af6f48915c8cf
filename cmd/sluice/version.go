package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sluice-io/sluice/internal/api"
	"github.com/sluice-io/sluice/internal/version"
)

// versionLine is what `sluice version` and `sluice --version` print:
// "sluice 0.2.0 (revision 1a2b3c4d5e6f, go1.26.8, linux/amd64), Kafka
// protocol of Apache Kafka 4.4.0".
func versionLine() string {
	return "sluice " + versionText()
}

// versionText is versionLine without the program's name, as cobra's
// root Version field holds it.
func versionText() string {
	return fmt.Sprintf("%s, Kafka protocol of Apache Kafka %s", version.Summary(), api.PinnedRelease().Name)
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print Sluice's version, revision and the Kafka release it imitates",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), versionLine())
		},
	}
}
