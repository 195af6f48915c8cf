// Package hostile runs the real sluice binary against hostile input and
// damaged disks (issue 14): bombs in record batches and frames, file
// descriptor exhaustion, corrupted segments and checkpoints. Where memory
// is the point, the server's resident memory (testbin.Process.Memory) is
// held to a stated bound, and after each attack the node must still answer
// a normal client with the data written before intact.
package hostile

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
