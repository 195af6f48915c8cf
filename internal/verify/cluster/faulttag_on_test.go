//go:build sluicefault

package cluster

// testFaultBuild is whether this test binary has -tags sluicefault.
const testFaultBuild = true
