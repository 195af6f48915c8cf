package metrics

import (
	"strings"
	"testing"
)

// metricsListenerKey is the key a node's /metrics is served on in the tests.
const metricsListenerKey = "sluice.metrics.listener"

// TestDeployFilesParse checks the dashboard and the rules as files: the
// dashboard takes its data source as the DS_PROMETHEUS input on every panel
// and target, has the rows the overview promises, and every expression of
// both files selects at least one metric.
func TestDeployFilesParse(t *testing.T) {
	exprs, recorded := deployExpressions(t)
	if _, _, err := usedSeries(exprs); err != nil {
		t.Fatal(err)
	}
	if len(recorded) != 0 {
		t.Errorf("recording rules %v: the alert file is meant to hold alerts only", recorded)
	}
	data, err := readRepoFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	_, d, err := dashboardExpressions(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Inputs) != 1 || d.Inputs[0].Name != "DS_PROMETHEUS" || d.Inputs[0].PluginID != "prometheus" {
		t.Errorf("dashboard inputs %+v, want the one datasource input DS_PROMETHEUS", d.Inputs)
	}
	if !strings.Contains(string(data), `"uid": "${DS_PROMETHEUS}"`) || strings.Count(string(data), `"uid": "`) != strings.Count(string(data), `"uid": "${DS_PROMETHEUS}"`)+2 {
		t.Errorf("a panel, target or variable names a data source other than ${DS_PROMETHEUS}")
	}
	var rows []string
	for _, p := range d.Panels {
		if p.Type == "row" {
			rows = append(rows, p.Title)
		}
	}
	want := []string{"Cluster health", "Throughput", "Requests", "Storage", "Metadata quorum (Raft)", "Consumer groups", "Process"}
	if strings.Join(rows, "|") != strings.Join(want, "|") {
		t.Errorf("dashboard rows %q, want %q", rows, want)
	}
}

// deployExpressions reads every expression of the dashboard and the rules.
func deployExpressions(t *testing.T) ([]expression, []string) {
	t.Helper()
	data, err := readRepoFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	dexprs, _, err := dashboardExpressions(data)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := readRepoFile(rulesPath)
	if err != nil {
		t.Fatal(err)
	}
	rexprs, recorded, err := ruleExpressions(rules)
	if err != nil {
		t.Fatal(err)
	}
	if len(dexprs) < 40 || len(rexprs) < 9 {
		t.Fatalf("read %d dashboard and %d rule expressions: the files lost content, or the reader misses it", len(dexprs), len(rexprs))
	}
	return append(dexprs, rexprs...), recorded
}
