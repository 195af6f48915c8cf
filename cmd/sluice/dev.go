package main

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/sluice-io/sluice/internal/devcluster"
)

func newDevCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Development helpers: a local cluster on one machine",
	}
	cmd.AddCommand(newDevClusterCommand())
	return cmd
}

func newDevClusterCommand() *cobra.Command {
	opts := devcluster.Options{}
	cmd := &cobra.Command{
		Use:   "cluster [N]",
		Short: "Run N combined broker+controller nodes on 127.0.0.1 (default 3) until Ctrl-C",
		Long: `Runs N nodes of this binary as child processes, each a combined broker and
controller on 127.0.0.1, formatted with one cluster id: node i listens for
clients on base-port+i-1, for controllers on base-port+100+i-1 and serves
/metrics, /healthz and /readyz on metrics-base-port+i-1; node 1 also serves
the web console. Data and each node's log are kept under --data-dir, so a
second run restarts the same cluster. It prints the bootstrap servers and
each node's pid, says "ready" once every node's /readyz does, and stops
every node on Ctrl-C or SIGTERM, or when one of them exits. For trying
Sluice out, not for production.`,
		Example: `  sluice dev cluster 3
  sluice topic create demo -p 3 -r 3 --brokers 127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Nodes = 3
			if len(args) == 1 {
				n, err := strconv.Atoi(args[0])
				if err != nil {
					return fmt.Errorf("node count %q is not a number", args[0])
				}
				opts.Nodes = n
			}
			binary, err := os.Executable()
			if err != nil {
				return fmt.Errorf("find the sluice binary to run as the nodes: %w", err)
			}
			opts.Binary = binary
			opts.Out = cmd.OutOrStdout()
			c, err := devcluster.New(opts)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return c.Run(ctx)
		},
	}
	f := cmd.Flags()
	f.IntVar(&opts.BasePort, "base-port", 9092, "node 1's client port; node i's is base-port+i-1 and its controller port base-port+100+i-1")
	f.IntVar(&opts.MetricsBasePort, "metrics-base-port", 9644, "node 1's metrics port (/metrics, /healthz, /readyz); node i's is metrics-base-port+i-1")
	f.StringVar(&opts.Console, "console", "127.0.0.1:8080", `host:port of node 1's web console; "" for none`)
	f.StringVar(&opts.Dir, "data-dir", "data/dev-cluster", "directory of the nodes' log dirs (node-N) and logs (node-N.log)")
	f.StringArrayVar(&opts.Overrides, "override", nil, "key=value given to every node (repeatable), as sluice server --override")
	return cmd
}
