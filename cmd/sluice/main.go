// Command sluice is the Sluice binary: a Kafka-compatible broker
// (`sluice server`), its storage tool (`sluice storage`) and client commands
// (topic, cluster, produce, consume, bench; internal/cli).
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/sluice-io/sluice/internal/cli"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "sluice:", err)
		os.Exit(cli.ExitCode(err))
	}
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "sluice",
		Short:         "Sluice, a Kafka-compatible streaming broker",
		SilenceUsage:  true,
		SilenceErrors: true,
		// --version prints the line `sluice version` prints.
		Version: versionText(),
	}
	root.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	root.AddCommand(newServerCommand(), newStorageCommand(), newVersionCommand())
	root.AddCommand(newDevCommand())
	root.AddCommand(newHealthcheckCommand())
	cli.AddCommands(root)
	return root
}
