// Package netfault injects network faults between the nodes of a Sluice
// cluster running as local processes: a TCP proxy every inter-node
// connection goes through, which can refuse or blackhole all of one
// node's traffic (Cut) or the traffic between two nodes only (CutLink),
// and an identifier (Owners) that attributes an accepted connection to the
// node whose process holds its client end, from Linux's /proc.
//
// It takes no testing.TB, so the test clusters (internal/testcluster,
// sluicetest) and `sluice verify` (internal/verify/cluster) share it.
package netfault
