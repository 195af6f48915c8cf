package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/internal/config"
)

func TestLoadConfigOverrides(t *testing.T) {
	cfg, err := loadConfig("", []string{"num.partitions=7", "log.dirs=/tmp/x=y"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Int(config.NumPartitions) != 7 || cfg.LogDirs()[0] != "/tmp/x=y" {
		t.Fatalf("overrides not applied: %d %v", cfg.Int(config.NumPartitions), cfg.LogDirs())
	}
	for _, bad := range []string{"num.partitions", "=3", "num.partitions=many"} {
		if _, err := loadConfig("", []string{bad}); err == nil {
			t.Errorf("--override %q accepted", bad)
		}
	}
	if _, err := loadConfig("/does/not/exist.properties", nil); err == nil {
		t.Error("a missing config file was accepted")
	}
}

func TestCommands(t *testing.T) {
	run := func(args ...string) (string, error) {
		root := newRootCommand()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(args)
		err := root.Execute()
		return out.String(), err
	}
	out, err := run("version")
	if err != nil || !strings.Contains(out, "Apache Kafka") {
		t.Fatalf("version: %v %q", err, out)
	}
	out, err = run("storage", "random-uuid")
	if err != nil || len(strings.TrimSpace(out)) != 22 {
		t.Fatalf("random-uuid: %v %q", err, out)
	}
	if _, err := run("storage", "format", "--config", "x"); err == nil {
		t.Fatal("format without --cluster-id succeeded")
	}
	dir := t.TempDir()
	id := strings.TrimSpace(out)
	if out, err := run("storage", "format", "--cluster-id", id, "--config", "", "--override", "log.dirs="+dir); err != nil {
		t.Fatalf("format: %v %s", err, out)
	}
}
