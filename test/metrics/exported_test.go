package metrics

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"
)

// prometheusOwn are the series Prometheus itself adds to every target
// (https://prometheus.io/docs/concepts/jobs_instances/) and the alerts'
// own: rules may use them though no node exports them.
var prometheusOwn = map[string]bool{
	"up": true, "scrape_duration_seconds": true, "scrape_samples_scraped": true,
	"scrape_samples_post_metric_relabeling": true, "scrape_series_added": true,
	"ALERTS": true, "ALERTS_FOR_STATE": true,
}

// prometheusLabels are the labels Prometheus attaches to every scraped
// series.
var prometheusLabels = map[string]bool{"job": true, "instance": true}

// exported is what a scrape holds: each sample name (a histogram's _bucket,
// _sum and _count included, as written) with the label names its series
// carry.
type exported map[string]map[string]bool

// labelName finds the label names of a sample line's label set (a label
// value that itself holds `x="` would add a name: harmless, the check
// looks for labels that are missing).
var labelName = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="`)

// exportedNames reads a /metrics text exposition.
func exportedNames(r io.Reader) (exported, error) {
	names := exported{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		end := strings.IndexAny(line, "{ \t")
		if end <= 0 {
			return nil, fmt.Errorf("exposition line without a value: %q", line)
		}
		name := line[:end]
		if names[name] == nil {
			names[name] = map[string]bool{}
		}
		if line[end] == '{' {
			for _, m := range labelName.FindAllStringSubmatch(line[end:], -1) {
				names[name][m[1]] = true
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read exposition: %w", err)
	}
	return names, nil
}

// scrape fetches url (a node's /metrics) and returns its sample names.
func scrape(ctx context.Context, url string) (exported, error) {
	body, err := scrapeText(ctx, url)
	if err != nil {
		return nil, err
	}
	return exportedNames(strings.NewReader(body))
}

// scrapeText fetches url and returns the exposition text.
func scrapeText(ctx context.Context, url string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", fmt.Errorf("scrape %s: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("scrape %s: %s", url, resp.Status)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("scrape %s: %w", url, err)
	}
	return string(body), nil
}

// A use is one metric name an expression of the dashboard or the rules
// selects.
type use struct {
	name  string
	where string
}

// A labelUse is one label an expression matches on or groups by, with the
// metric names of the expression: one of them must carry it.
type labelUse struct {
	label string
	names []string
	where string
}

// usedSeries extracts the metric names and the label names of every
// expression.
func usedSeries(exprs []expression) ([]use, []labelUse, error) {
	var uses []use
	var labels []labelUse
	for _, e := range exprs {
		names, lbls, err := e.series()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", e.where, err)
		}
		if len(names) == 0 && !e.variable {
			return nil, nil, fmt.Errorf("%s: expression %q selects no metric", e.where, e.expr)
		}
		for _, n := range names {
			uses = append(uses, use{name: n, where: e.where})
		}
		for _, l := range lbls {
			labels = append(labels, labelUse{label: l, names: names, where: e.where})
		}
	}
	return uses, labels, nil
}

// series returns the metric and label names of an expression; a variable
// query's label_values label is one of its labels.
func (e expression) series() (names, labels []string, err error) {
	expr := e.expr
	if e.variable {
		var label string
		expr, label = variableSelector(e.expr)
		if label != "" && expr != "" {
			labels = append(labels, label)
		}
	}
	if names, err = metricNames(expr); err != nil {
		return nil, nil, err
	}
	return names, append(labels, exprLabels(expr)...), nil
}

// missing lists, one line each, the uses of names that neither the scrape
// nor Prometheus nor a recording rule provides, and the labels that none of
// their expression's exported metrics carries.
func missing(uses []use, labels []labelUse, got exported, recorded []string) []string {
	var out []string
	for _, u := range uses {
		if got[u.name] == nil && !prometheusOwn[u.name] && !slices.Contains(recorded, u.name) {
			out = append(out, fmt.Sprintf("%s (%s)", u.name, u.where))
		}
	}
	for _, l := range labels {
		if prometheusLabels[l.label] || !labelMissing(l, got) {
			continue
		}
		out = append(out, fmt.Sprintf("label %s of %s (%s)", l.label, strings.Join(l.names, ", "), l.where))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// labelMissing reports whether every metric of l's expression is
// exported (the label sets of the others are unknown) and none carries
// l.label.
func labelMissing(l labelUse, got exported) bool {
	for _, n := range l.names {
		if got[n] == nil || got[n][l.label] {
			return false
		}
	}
	return len(l.names) > 0
}
