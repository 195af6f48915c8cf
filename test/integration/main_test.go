// Package integration starts the real sluice binary on free ports and drives
// it with franz-go at its default settings (acks=all, idempotent producer).
package integration

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
