package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/gcfloor"
	"github.com/sluice-io/sluice/internal/logging"
	"github.com/sluice-io/sluice/internal/node"
	"github.com/sluice-io/sluice/internal/vfs"
)

func newServerCommand() *cobra.Command {
	var configFile string
	var overrides []string
	var debugAddr, logFormat, logLevel string
	var configEnv, strictConfig bool
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run a node (with no flags: a combined broker and controller on 127.0.0.1:9092, data in ./data)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for key, v := range map[config.SluiceKey]string{config.SluiceDebugListener: debugAddr, config.SluiceLogFormat: logFormat, config.SluiceLogLevel: logLevel} {
				if v != "" {
					overrides = append(overrides, key.Name()+"="+v)
				}
			}
			var env []config.EnvSetting
			if configEnv {
				env = config.FromEnv(os.Environ())
			}
			cfg, err := loadConfigEnv(configFile, env, overrides)
			if err != nil {
				return err
			}
			keys := cfg.CheckKeys(env)
			if err := keys.Err(); strictConfig && err != nil {
				return err // before anything is formatted or bound
			}
			logger, err := newLogger(cfg)
			if err != nil {
				return err
			}
			keys.Log(logger.With("component", "config"))
			if configEnv {
				// A busy port must fail the start before $CLUSTER_ID formats anything.
				if err := node.CheckListeners(cfg); err != nil {
					return err
				}
				if err := formatFromEnv(vfs.Default, cfg, os.LookupEnv, logger); err != nil {
					return err
				}
			}
			if stopFloor, ok := gcfloor.Start(gcfloor.DefaultFloor); ok {
				defer stopFloor()
				logger.Debug("garbage collector's heap goal kept at least the floor while the live heap is small (GOGC in the environment turns this off)", "floor_bytes", gcfloor.DefaultFloor)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			n, err := node.New(cfg, logger, prometheus.NewRegistry())
			if err != nil {
				return err
			}
			return n.Run(ctx)
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "", "server.properties file (Kafka's key names)")
	cmd.Flags().StringArrayVar(&overrides, "override", nil, "key=value overriding the config file and the environment (repeatable)")
	cmd.Flags().BoolVar(&configEnv, "config-env", false, "also read keys from KAFKA_* and SLUICE_* environment variables, as Kafka's container image does (KAFKA_LOG_RETENTION_HOURS=5 is log.retention.hours=5, SLUICE_METRICS_LISTENER sets sluice.metrics.listener; _ is a dot, __ an underscore, ___ a dash); they override the file, --override overrides them; CLUSTER_ID formats unformatted log dirs with that cluster id, as Kafka's image does")
	cmd.Flags().BoolVar(&strictConfig, "strict-config", false, "refuse to start when a configuration key is unknown (misspelt, or not one of Kafka's or Sluice's keys), listing them all; without it each is logged as a warning")
	cmd.Flags().StringVar(&debugAddr, "debug-addr", "", "host:port of the debug HTTP listener (/metrics, /healthz, /debug/pprof); same as --override "+config.SluiceDebugListener.Name()+"=host:port")
	cmd.Flags().StringVar(&logFormat, "log-format", "", "log format, text or json; same as --override "+config.SluiceLogFormat.Name()+"=... (default text)")
	cmd.Flags().StringVar(&logLevel, "log-level", "", "root log level, TRACE, DEBUG, INFO, WARN, ERROR or FATAL, changeable at run time (kafka-configs.sh --entity-type broker-loggers); same as --override "+config.SluiceLogLevel.Name()+"=... (default INFO)")
	return cmd
}

// newLogger builds the node's logger on stderr from sluice.log.format and
// sluice.log.level.
func newLogger(cfg *config.Config) (*slog.Logger, error) {
	format, _ := cfg.Raw(config.SluiceLogFormat)
	level, _ := cfg.Raw(config.SluiceLogLevel)
	logger, err := logging.New(os.Stderr, strings.TrimSpace(format), strings.TrimSpace(level))
	if err != nil {
		return nil, fmt.Errorf("%s, %s: %w", config.SluiceLogFormat.Name(), config.SluiceLogLevel.Name(), err)
	}
	return logger, nil
}

// loadConfig reads the properties file and applies key=value overrides, as
// kafka-server-start.sh --override does.
func loadConfig(path string, overrides []string) (*config.Config, error) {
	return loadConfigEnv(path, nil, overrides)
}

// loadConfigEnv is loadConfig with the environment's keys (--config-env) between the file
// and the overrides.
func loadConfigEnv(path string, env []config.EnvSetting, overrides []string) (*config.Config, error) {
	kv := config.EnvOverrides(env)
	for _, o := range overrides {
		k, v, ok := strings.Cut(o, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("--override %q: want key=value", o)
		}
		kv[strings.TrimSpace(k)] = v
	}
	return config.Load(path, kv) // its errors name the file or the key
}
