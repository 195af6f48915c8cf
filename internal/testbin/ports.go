package testbin

import (
	"fmt"
	"net"
	"testing"
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

// FreePorts returns n distinct free ports of 127.0.0.1: all n listeners are
// held open together, so the kernel cannot hand out one port twice.
func FreePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("testbin: free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
