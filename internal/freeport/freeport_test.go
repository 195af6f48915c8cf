package freeport

import "testing"

func TestPortsAreDistinctAndBelowTheEphemeralRange(t *testing.T) {
	ports, err := Ports(40)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p] || p >= ephemeralLow() || p < 1024 {
			t.Fatalf("port %d repeated, privileged or in the ephemeral range: %v", p, ports)
		}
		seen[p] = true
	}
}
