// Package config runs the real sluice binary to check how `sluice server` takes its
// configuration: the environment (--config-env), unknown keys and --strict-config.
package config

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
