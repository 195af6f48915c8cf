// Package faults runs real sluice processes under injected faults (kill -9,
// SIGSTOP) while real clients work against them, and checks what the
// clients were promised. The short form runs with `go test`; set
// SLUICE_FAULTS_LONG=1 for the long form.
package faults

import (
	"os"
	"testing"

	"github.com/sluice-io/sluice/internal/testbin"
)

// binaryPath is set by TestMain: the sluice binary built once for all tests.
var binaryPath string

func TestMain(m *testing.M) {
	os.Exit(testbin.RunTests(m, &binaryPath))
}
