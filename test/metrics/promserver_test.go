package metrics

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/testbin"
	"github.com/sluice-io/sluice/internal/testutil"
)

// promServer is a real Prometheus server the test runs: its own config,
// storage in a temp dir, on a free 127.0.0.1 port.
type promServer struct {
	base string // http://127.0.0.1:port
	proc *testbin.Process
}

// startPrometheus runs binary scraping targets (host:port of /metrics)
// every second as job "sluice", with the repository's alert rules loaded
// and evaluated every second, and waits until it is ready.
func startPrometheus(t *testing.T, binary string, targets []string) *promServer {
	t.Helper()
	dir := t.TempDir()
	quoted := make([]string, len(targets))
	for i, tg := range targets {
		quoted[i] = strconv.Quote(tg)
	}
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 900ms
  evaluation_interval: 1s
rule_files:
  - %s
scrape_configs:
  - job_name: sluice
    static_configs:
      - targets: [%s]
`, strconv.Quote(repoPath(rulesPath)), strings.Join(quoted, ", "))
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", testbin.FreePort(t))
	p := &promServer{base: "http://" + addr}
	p.proc = testbin.StartProcess(t, "prometheus", binary,
		"--config.file="+cfgPath,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--log.level=warn")
	t.Cleanup(func() { p.proc.Stop(10 * time.Second) })
	testutil.EventuallyNoError(t, 60*time.Second, func() error {
		if exited, err := p.proc.Exited(); exited {
			t.Fatalf("prometheus exited: %v\n%s", err, p.proc.Logs())
		}
		return p.get("/-/ready", nil)
	}, "prometheus ready on %s", addr)
	return p
}

// get fetches path and decodes its JSON into out (nil: only the status).
func (p *promServer) get(path string, out any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, body)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("GET %s: %w: %s", path, err, body)
	}
	return nil
}

// A promSample is one element of an instant vector.
type promSample struct {
	labels map[string]string
	value  float64
}

// query evaluates an instant PromQL query through the HTTP API.
func (p *promServer) query(q string) ([]promSample, error) {
	var resp struct {
		Status string `json:"status"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := p.get("/api/v1/query?query="+url.QueryEscape(q), &resp); err != nil {
		return nil, err
	}
	if resp.Status != "success" || resp.Data.ResultType != "vector" {
		return nil, fmt.Errorf("query %s: status %s, result type %s", q, resp.Status, resp.Data.ResultType)
	}
	out := make([]promSample, 0, len(resp.Data.Result))
	for _, r := range resp.Data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("query %s: value %v: %w", q, r.Value[1], err)
		}
		out = append(out, promSample{labels: r.Metric, value: v})
	}
	return out, nil
}

// scalar evaluates a query that yields one sample and returns its value;
// an empty result is an error naming the query.
func (p *promServer) scalar(q string) (float64, error) {
	res, err := p.query(q)
	if err != nil {
		return 0, err
	}
	if len(res) != 1 {
		return 0, fmt.Errorf("query %s: %d samples, want 1", q, len(res))
	}
	return res[0].value, nil
}

// awaitValue waits until q yields one sample for which ok holds, and
// returns its value; on the deadline it fails naming q and the last value.
func (p *promServer) awaitValue(t *testing.T, timeout time.Duration, q string, ok func(float64) bool, what string) float64 {
	t.Helper()
	var v float64
	testutil.EventuallyNoError(t, timeout, func() error {
		var err error
		if v, err = p.scalar(q); err != nil {
			return err
		}
		if !ok(v) {
			return fmt.Errorf("%s = %v", q, v)
		}
		return nil
	}, "%s", what)
	return v
}

// alertStates returns the state (pending, firing) of every active alert
// by name and labels.
func (p *promServer) alertStates() ([]promAlert, error) {
	var resp struct {
		Data struct {
			Alerts []promAlert `json:"alerts"`
		} `json:"data"`
	}
	if err := p.get("/api/v1/alerts", &resp); err != nil {
		return nil, err
	}
	return resp.Data.Alerts, nil
}

type promAlert struct {
	Labels map[string]string `json:"labels"`
	State  string            `json:"state"`
}

// ruleHealth returns, per rule name, Prometheus's health of its last
// evaluation ("ok", "err", "unknown") and the error if any.
func (p *promServer) ruleHealth() (map[string]string, error) {
	var resp struct {
		Data struct {
			Groups []struct {
				Rules []struct {
					Name      string `json:"name"`
					Health    string `json:"health"`
					LastError string `json:"lastError"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := p.get("/api/v1/rules", &resp); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, g := range resp.Data.Groups {
		for _, r := range g.Rules {
			out[r.Name] = strings.TrimSpace(r.Health + " " + r.LastError)
		}
	}
	return out, nil
}

// prometheusBinary finds Debian's prometheus and promtool on PATH (make
// prometheus-test installs the package when they are missing).
func prometheusBinary(t *testing.T) (prometheus, promtool string) {
	t.Helper()
	var err error
	if prometheus, err = exec.LookPath("prometheus"); err != nil {
		t.Fatalf("no prometheus on PATH (make prometheus-test installs Debian's package): %v", err)
	}
	if promtool, err = exec.LookPath("promtool"); err != nil {
		t.Fatalf("no promtool on PATH (make prometheus-test installs Debian's package): %v", err)
	}
	return prometheus, promtool
}

// promtoolCheckConfig runs promtool check config on the example
// configuration, which also checks the rule file it loads.
func promtoolCheckConfig(t *testing.T, promtool string) {
	t.Helper()
	out, err := exec.Command(promtool, "check", "config", repoPath(configPath)).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check config %s: %v\n%s", configPath, err, out)
	}
}

// promtoolRuleCount runs promtool check rules on the alert file and returns
// the number of rules it found.
func promtoolRuleCount(t *testing.T, promtool string) int {
	t.Helper()
	out, err := exec.Command(promtool, "check", "rules", repoPath(rulesPath)).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules %s: %v\n%s", rulesPath, err, out)
	}
	m := regexp.MustCompile(`SUCCESS: (\d+) rules found`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("promtool check rules: no rule count in its output:\n%s", out)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}
