package node

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-io/sluice/internal/testutil"
	"github.com/sluice-io/sluice/internal/version"
)

// TestBuildInfoMetric: a node's registry holds sluice_build_info with
// this build's version, revision and Go release, valued 1.
func TestBuildInfoMetric(t *testing.T) {
	reg := prometheus.NewRegistry()
	n, err := New(testConfig(t, t.TempDir(), nil), nil, reg)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	series := testutil.Gather(t, reg)
	key := fmt.Sprintf("sluice_build_info{goversion=%q,revision=%q,version=%q}", version.GoVersion(), version.Revision(), version.Version())
	if v, ok := series[key]; !ok || v != 1 {
		t.Fatalf("%s = %v (present %v); build info series: %v", key, v, ok, buildInfoSeries(series))
	}
}

func buildInfoSeries(series map[string]float64) []string {
	var out []string
	for k, v := range series {
		if strings.HasPrefix(k, "sluice_build_info") {
			out = append(out, fmt.Sprintf("%s=%v", k, v))
		}
	}
	return out
}
