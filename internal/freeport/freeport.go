// Package freeport finds free TCP ports of 127.0.0.1 for nodes a test or
// `sluice verify` starts. It imports no testing package, so the binary can
// use it.
package freeport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Ports returns n distinct free ports of 127.0.0.1: all n listeners are
// held open together, so no port is handed out twice. The ports lie below
// the kernel's ephemeral range: a port from that range can be taken, while
// a killed node is down, as the local port of a client's connection (or by
// a peer's self-connection when it redials it), and the node's restart
// would then fail to bind.
func Ports(n int) ([]int, error) {
	low := ephemeralLow()
	base := max(1024, low-12000)
	ports := make([]int, 0, n)
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for tries := 0; len(ports) < n; tries++ {
		if tries > 1000 {
			return nil, fmt.Errorf("no free port in [%d, %d) after %d tries", base, low, tries)
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(base+rand.IntN(low-base)))
		if errors.Is(err, syscall.EADDRINUSE) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// ephemeralLow is the first port of the kernel's ephemeral range (32768,
// Linux's default, when it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	low, err := strconv.Atoi(f[0])
	if err != nil || low <= 2048 {
		return 32768
	}
	return low
}
