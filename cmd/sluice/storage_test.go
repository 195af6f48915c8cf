package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestStorageFormatSaysWhatItSkipped: with --ignore-formatted a formatted
// dir is reported as skipped, with its own cluster id, and only the new one
// as formatted; the --cluster-id usage names its value type, not the
// backquoted command.
func TestStorageFormatSaysWhatItSkipped(t *testing.T) {
	run := func(args ...string) (string, error) {
		root := newRootCommand()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(args)
		err := root.Execute()
		return out.String(), err
	}
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	const first, second = "MkU3OEVBNTcwNTJENDM2Qg", "AAAAAAAAAAAAAAAAAAAAAQ"
	if out, err := run("storage", "format", "-t", first, "-c", "", "--override", "log.dirs="+a); err != nil {
		t.Fatalf("format %s: %v\n%s", a, err, out)
	}
	out, err := run("storage", "format", "-g", "-t", second, "-c", "", "--override", "log.dirs="+a+","+b)
	if err != nil {
		t.Fatalf("format -g: %v\n%s", err, out)
	}
	want := "Skipping " + a + ": already formatted with cluster id " + first + " and node id 1\n" +
		"Formatting " + b + " with cluster id " + second + " and node id 1\n"
	if out != want {
		t.Fatalf("format -g printed\n%s\nwant\n%s", out, want)
	}
	help, err := run("storage", "format", "--help")
	if err != nil || !strings.Contains(help, "--cluster-id string") {
		t.Fatalf("format --help: %v\n%s", err, help)
	}
}
