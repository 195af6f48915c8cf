// Package metrics checks the Prometheus side of Sluice against real
// processes: every series the Grafana dashboard (deploy/grafana) and the
// alert rules (deploy/prometheus) use is exported by a node that has seen
// produce, fetch, groups and compaction (part of make test), and a real
// Prometheus server scraping a 3-node cluster sees the values the workload
// implies (make prometheus-test, which sets SLUICE_PROMETHEUS_TEST=1).
package metrics

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
