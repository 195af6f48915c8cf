package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"

	"sluice/internal/config"
	"sluice/internal/node"
)

// serveProfiled runs a Sluice node in this process, as `sluice server --override ...`
// does, with a CPU profile from start to SIGTERM and an allocation profile written at the
// end. `sluice server` has no pprof endpoint or flag, so this is how the suite profiles it
// without touching server code.
func serveProfiled(args []string) error {
	fs := flag.NewFlagSet("serve-profiled", flag.ContinueOnError)
	cpuPath := fs.String("cpu-profile", "", "CPU profile file")
	allocPath := fs.String("alloc-profile", "", "allocation (heap) profile file, written at exit")
	var overrides multiFlag
	fs.Var(&overrides, "override", "key=value as for sluice server (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cpuPath == "" || *allocPath == "" {
		return fmt.Errorf("serve-profiled needs --cpu-profile and --alloc-profile")
	}
	kv := make(map[string]string, len(overrides))
	for _, o := range overrides {
		k, v, ok := strings.Cut(o, "=")
		if !ok {
			return fmt.Errorf("--override %q: want key=value", o)
		}
		kv[k] = v
	}
	cfg, err := config.Load("", kv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	n, err := node.New(cfg, logger, prometheus.NewRegistry())
	if err != nil {
		return err
	}
	cpuFile, err := os.Create(*cpuPath)
	if err != nil {
		return fmt.Errorf("cpu profile: %w", err)
	}
	defer cpuFile.Close()
	if err := pprof.StartCPUProfile(cpuFile); err != nil {
		return fmt.Errorf("start cpu profile: %w", err)
	}
	runErr := n.Run(ctx)
	pprof.StopCPUProfile()
	allocFile, err := os.Create(*allocPath)
	if err != nil {
		return fmt.Errorf("alloc profile: %w", err)
	}
	defer allocFile.Close()
	runtime.GC()
	if err := pprof.Lookup("allocs").WriteTo(allocFile, 0); err != nil {
		return fmt.Errorf("write alloc profile: %w", err)
	}
	return runErr
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
