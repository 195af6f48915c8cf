package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// metricsListenerEnv is the variable that sets sluice.metrics.listener under
// `sluice server --config-env`; the health check follows it, so a container
// that moves the listener needs no second setting for its HEALTHCHECK.
const metricsListenerEnv = "SLUICE_METRICS_LISTENER"

// defaultHealthPort is the metrics listener's port in the container image and
// in the operations guide's examples.
const defaultHealthPort = "9644"

// newHealthcheckCommand is `sluice healthcheck`: the container image's
// HEALTHCHECK, which has no shell or curl to run (the image holds only this
// binary).
func newHealthcheckCommand() *cobra.Command {
	var url string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "healthcheck",
		Short: "Exit 0 if a node's /readyz (or --url) answers 200, else 1, printing the answer (a container's health check)",
		Long: "Asks a node's HTTP probe and exits 0 if it answers 200, 1 otherwise, printing what it answered.\n" +
			"Without --url it asks /readyz on 127.0.0.1 at the port of $" + metricsListenerEnv + " (the variable that\n" +
			"sets sluice.metrics.listener under `sluice server --config-env`), else at port " + defaultHealthPort + ".",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			target := url
			if target == "" {
				var err error
				if target, err = defaultHealthURL(os.LookupEnv); err != nil {
					return err
				}
			}
			return probeHealth(cmd.Context(), target, timeout, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&url, "url", "", "the probe to ask, e.g. http://127.0.0.1:9644/healthz (default: /readyz of the metrics listener on 127.0.0.1)")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Second, "give up after this long")
	return cmd
}

// defaultHealthURL is /readyz on the loopback address at the metrics
// listener's port from the environment, a wildcard or empty host asked on
// 127.0.0.1 (the check runs beside the server, inside its container).
func defaultHealthURL(getenv func(string) (string, bool)) (string, error) {
	addr, ok := getenv(metricsListenerEnv)
	if !ok || strings.TrimSpace(addr) == "" {
		return "http://127.0.0.1:" + defaultHealthPort + "/readyz", nil
	}
	host, port, err := net.SplitHostPort(strings.TrimSpace(addr))
	if err != nil {
		return "", fmt.Errorf("$%s=%q: %w", metricsListenerEnv, addr, err)
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/readyz", nil
}

// probeHealth GETs url and succeeds only on 200; the body goes to out either
// way, since /readyz lists each unmet condition on a line of its own.
func probeHealth(ctx context.Context, url string, timeout time.Duration, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("health check: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("health check: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return fmt.Errorf("health check: read the answer of %s: %w", url, err)
	}
	text := strings.TrimSpace(string(body))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health check: %s answered %s: %s", url, resp.Status, text)
	}
	fmt.Fprintln(out, text)
	return nil
}
