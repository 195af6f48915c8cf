package metrics

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
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

// exportedNames reads a /metrics text exposition and returns the names of
// its samples (a histogram's _bucket, _sum and _count included, as written).
func exportedNames(r io.Reader) (map[string]bool, error) {
	names := map[string]bool{}
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
		names[line[:end]] = true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read exposition: %w", err)
	}
	return names, nil
}

// scrape fetches url (a node's /metrics) and returns its sample names.
func scrape(ctx context.Context, url string) (map[string]bool, error) {
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

// usedNames extracts the metric names of every expression. Names that
// recording rules define count as provided by the rules themselves.
func usedNames(exprs []expression) ([]use, error) {
	var out []use
	for _, e := range exprs {
		extract := metricNames
		if e.variable {
			extract = variableQueryNames
		}
		names, err := extract(e.expr)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.where, err)
		}
		if len(names) == 0 && !e.variable {
			return nil, fmt.Errorf("%s: expression %q selects no metric", e.where, e.expr)
		}
		for _, n := range names {
			out = append(out, use{name: n, where: e.where})
		}
	}
	return out, nil
}

// missing lists, one line each, the uses of names that neither the scrape
// nor Prometheus nor a recording rule provides.
func missing(uses []use, exported map[string]bool, recorded []string) []string {
	var out []string
	for _, u := range uses {
		if exported[u.name] || prometheusOwn[u.name] || slices.Contains(recorded, u.name) {
			continue
		}
		out = append(out, fmt.Sprintf("%s (%s)", u.name, u.where))
	}
	slices.Sort(out)
	return slices.Compact(out)
}
