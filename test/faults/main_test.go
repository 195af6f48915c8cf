// Package faults runs real sluice processes under injected faults (kill -9,
// SIGSTOP) while real clients work against them, and checks what the
// clients were promised. The short form runs with `go test`; set
// SLUICE_FAULTS_LONG=1 for the long form.
package faults

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// binaryPath is set by TestMain: the sluice binary built once for all tests.
var binaryPath string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "sluice-faults-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "temp dir:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binaryPath = filepath.Join(dir, "sluice")
	build := exec.Command("go", "build", "-o", binaryPath, "sluice/cmd/sluice")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build sluice:", err)
		return 1
	}
	return m.Run()
}
