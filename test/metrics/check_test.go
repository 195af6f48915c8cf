package metrics

import (
	"slices"
	"strings"
	"testing"
)

func TestMetricNames(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`up`, []string{"up"}},
		{`sum(kafka_server_replicamanager_underreplicatedpartitions) > 0`,
			[]string{"kafka_server_replicamanager_underreplicatedpartitions"}},
		{`sum by (topic) (rate(kafka_server_brokertopicmetrics_bytesin_total{topic!="",topic=~"$topic"}[$__rate_interval]))`,
			[]string{"kafka_server_brokertopicmetrics_bytesin_total"}},
		{`histogram_quantile(0.99, sum by (le, request) (rate(kafka_network_requestmetrics_totaltimems_bucket[5m])))`,
			[]string{"kafka_network_requestmetrics_totaltimems_bucket"}},
		{`sum(rate(a_total[1h30m] offset 5m)) without (instance) / on (topic) group_left (x) b`,
			[]string{"a_total", "b"}},
		{`sum(x{l="a{b}[c]\"d"}) != 1 or absent(x) and bool 1e3 unless y`, []string{"x", "y"}},
		{`count_values("by", z) * on() vector(0)`, []string{"z"}},
		{"# a comment naming not_a_metric\nrate(w[${__interval}])", []string{"w"}},
		{`max by(consumergroup)(deriv(kafka_consumergroup_lag_sum[10m])) > .5`, []string{"kafka_consumergroup_lag_sum"}},
	} {
		got, err := metricNames(tc.expr)
		if err != nil {
			t.Errorf("metricNames(%q): %v", tc.expr, err)
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("metricNames(%q) = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

func TestExprLabels(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`up`, nil},
		{`sum by (topic) (rate(x{job=~"$job",topic!="",error!~"a|b"}[$__rate_interval]))`, []string{"error", "job", "topic"}},
		{`histogram_quantile(0.99, sum without(instance)(rate(x_bucket[5m]))) / on() group_left(request) y`, []string{"instance", "request"}},
		{`x{l="a{b=1}", m='c'} unless ignoring (n , o) y`, []string{"l", "m", "n", "o"}},
		{`count_values("by (z)", x) * on ($var) y{${__x}="v"}`, nil},
	} {
		if got := exprLabels(tc.expr); !slices.Equal(got, tc.want) {
			t.Errorf("exprLabels(%q) = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

func TestMetricNamesRefuses(t *testing.T) {
	for _, expr := range []string{`{__name__="x"}`, `x{l="unterminated}`, `sum(x[5m)`} {
		if got, err := metricNames(expr); err == nil {
			t.Errorf("metricNames(%q) = %q, want an error", expr, got)
		}
	}
}

func TestVariableQueryNames(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{`label_values(kafka_log_log_size, topic)`, []string{"kafka_log_log_size"}},
		{`label_values(kafka_consumergroup_lag{topic=~"$topic"}, consumergroup)`, []string{"kafka_consumergroup_lag"}},
		{`label_values(job)`, nil},
		{`query_result(topk(5, kafka_log_log_size))`, []string{"kafka_log_log_size"}},
	} {
		got, err := variableQueryNames(tc.query)
		if err != nil {
			t.Errorf("variableQueryNames(%q): %v", tc.query, err)
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("variableQueryNames(%q) = %q, want %q", tc.query, got, tc.want)
		}
	}
}

// TestCheckNamesWhatIsMissing runs the whole check (dashboard and rules
// parsing, extraction, comparison with a scrape) on small inputs: a wrong
// name in a panel, in a variable or in a rule must be reported with where
// it is used, and correct ones must not.
func TestCheckNamesWhatIsMissing(t *testing.T) {
	const exposition = `# HELP kafka_server_brokertopicmetrics_bytesin_total x
# TYPE kafka_server_brokertopicmetrics_bytesin_total counter
kafka_server_brokertopicmetrics_bytesin_total 12
kafka_server_brokertopicmetrics_bytesin_total{topic="t"} 12
kafka_network_requestmetrics_totaltimems_bucket{request="Produce",le="+Inf"} 3
kafka_log_log_size{topic="t",partition="0"} 100
`
	dashboardWith := func(expr, variable string) string {
		return `{"__inputs":[{"name":"DS_PROMETHEUS","type":"datasource","pluginId":"prometheus"}],
"panels":[{"type":"row","title":"r","panels":[{"title":"collapsed","targets":[{"refId":"A","expr":"sum(rate(kafka_server_brokertopicmetrics_bytesin_total[5m]))"}]}]},
{"title":"p","type":"timeseries","targets":[{"refId":"B","expr":` + quoteJSON(expr) + `}]}],
"templating":{"list":[{"name":"topic","type":"query","query":{"query":` + quoteJSON(variable) + `}}]}}`
	}
	rulesWith := func(expr string) string {
		return "groups:\n  - name: g\n    rules:\n      - record: sluice:bytesin:rate5m\n        expr: sum(rate(kafka_server_brokertopicmetrics_bytesin_total[5m]))\n" +
			"      - alert: A\n        expr: |\n          " + expr + "\n        for: 5m\n" +
			"      - alert: B\n        expr: sluice:bytesin:rate5m > 1\n"
	}
	good := `histogram_quantile(0.99, sum by (le) (rate(kafka_network_requestmetrics_totaltimems_bucket[5m])))`
	for _, tc := range []struct {
		name                         string
		panelExpr, variable, ruleExp string
		want                         []string
	}{
		{"all exported", good, "label_values(kafka_log_log_size, topic)", "up == 0", nil},
		{"wrong panel name", `rate(kafka_server_brokertopicmetrics_bytesin[5m])`, "label_values(kafka_log_log_size, topic)", "up == 0",
			[]string{`kafka_server_brokertopicmetrics_bytesin (panel "p" target B)`}},
		{"histogram without suffix", `histogram_quantile(0.99, rate(kafka_network_requestmetrics_totaltimems[5m]))`, "label_values(topic)", "up == 0",
			[]string{`kafka_network_requestmetrics_totaltimems (panel "p" target B)`}},
		{"wrong variable name", good, "label_values(kafka_log_size, topic)", "up == 0",
			[]string{"kafka_log_size (variable topic)"}},
		{"wrong rule name", good, "label_values(topic)", "sum(kafka_server_replicamanager_underreplicated) > 0",
			[]string{"kafka_server_replicamanager_underreplicated (alert A)"}},
		{"wrong matcher label", `sum(rate(kafka_server_brokertopicmetrics_bytesin_total{topics!=""}[5m]))`, "label_values(topic)", "up == 0",
			[]string{`label topics of kafka_server_brokertopicmetrics_bytesin_total (panel "p" target B)`}},
		{"wrong grouping label", `sum by (le, api) (rate(kafka_network_requestmetrics_totaltimems_bucket[5m]))`, "label_values(topic)", "up == 0",
			[]string{`label api of kafka_network_requestmetrics_totaltimems_bucket (panel "p" target B)`}},
		{"wrong variable label", good, "label_values(kafka_log_log_size, topics)", "up == 0",
			[]string{"label topics of kafka_log_log_size (variable topic)"}},
		{"label of one of two metrics", `kafka_log_log_size{partition="0"} / on (topic) group_left kafka_server_brokertopicmetrics_bytesin_total`, "label_values(topic)", `up{job="x"} == 0`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dexprs, _, err := dashboardExpressions([]byte(dashboardWith(tc.panelExpr, tc.variable)))
			if err != nil {
				t.Fatal(err)
			}
			rexprs, recorded, err := ruleExpressions([]byte(rulesWith(tc.ruleExp)))
			if err != nil {
				t.Fatal(err)
			}
			if len(rexprs) != 3 || !slices.Equal(recorded, []string{"sluice:bytesin:rate5m"}) {
				t.Fatalf("rules read as %v, recorded %v; want 3 rules, one recorded", rexprs, recorded)
			}
			uses, labels, err := usedSeries(append(dexprs, rexprs...))
			if err != nil {
				t.Fatal(err)
			}
			scraped, err := exportedNames(strings.NewReader(exposition))
			if err != nil {
				t.Fatal(err)
			}
			if got := missing(uses, labels, scraped, recorded); !slices.Equal(got, tc.want) {
				t.Errorf("missing = %q, want %q", got, tc.want)
			}
		})
	}
}

func quoteJSON(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
