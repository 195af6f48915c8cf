package testbin

import (
	"testing"

	"github.com/sluice-io/sluice/internal/freeport"
)

// FreePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func FreePort(tb testing.TB) int {
	tb.Helper()
	ports, err := FreePorts(1)
	if err != nil {
		tb.Fatal(err)
	}
	return ports[0]
}

// FreePorts returns n distinct free ports of 127.0.0.1, below the kernel's
// ephemeral range (freeport.Ports).
func FreePorts(n int) ([]int, error) { return freeport.Ports(n) }
