package node

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/testbin"
)

// stableFamilies are the families whose values an idle node keeps still
// between two reads; the others are compared by their series only.
var stableFamilies = []string{"kafka_log_log_", "kafka_consumergroup_", "kafka_server_brokertopicmetrics_",
	"kafka_server_replicamanager_", "kafka_controller_kafkacontroller_globalpartitioncount"}

// TestStreamedMetricsMatchTheRegistry scrapes a small real node's /metrics
// (written from its collectors one series at a time) and checks it parses
// and holds the series client_golang renders from the node's registry,
// with the same values where the node is idle.
func TestStreamedMetricsMatchTheRegistry(t *testing.T) {
	ports, err := testbin.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("", map[string]string{
		"log.dirs":                 t.TempDir(),
		"listeners":                fmt.Sprintf("PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:%d", ports[0]),
		"controller.quorum.voters": fmt.Sprintf("1@127.0.0.1:%d", ports[0]),
		"sluice.metrics.listener":  fmt.Sprintf("127.0.0.1:%d", ports[1]),
	})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	n, err := New(cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})), reg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("node stop: %v", err)
		}
	})
	select {
	case <-n.Ready():
	case err := <-done:
		t.Fatalf("node stopped at start: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("node not ready after 30s")
	}
	useSmallNode(t, n.Addr("PLAINTEXT").String())
	waitRequestRecorded(t, reg, "OffsetCommit")

	streamed := parseMetrics(t, scrapeText(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", ports[1])))
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	rendered := parseMetrics(t, rec.Body.String())
	for name, want := range rendered {
		got, ok := streamed[name]
		if !ok {
			t.Errorf("%s: not served", name)
			continue
		}
		values := false
		for _, p := range stableFamilies {
			values = values || strings.HasPrefix(name, p)
		}
		if g, w := seriesOf(got, values), seriesOf(want, values); g != w {
			t.Errorf("%s served as\n%s\nclient_golang renders\n%s", name, g, w)
		}
	}
	for name := range streamed {
		if _, ok := rendered[name]; !ok && !strings.HasPrefix(name, "go_") && !strings.HasPrefix(name, "process_") {
			t.Errorf("%s: served, not in the registry", name)
		}
	}
	for _, name := range []string{"kafka_log_log_size", "kafka_consumergroup_lag", "kafka_network_requestmetrics_totaltimems"} {
		if _, ok := streamed[name]; !ok {
			t.Errorf("%s not served", name)
		}
	}
}

// useSmallNode gives the node a topic with records and a group with
// committed offsets, then closes its clients.
func useSmallNode(t *testing.T, addr string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx := context.Background()
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "streamed"); err != nil {
		t.Fatal(err)
	}
	for p := range int32(3) {
		for i := range 4 {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "streamed", Partition: p, Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	offsets := kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: "streamed", Partition: 1, At: 1, LeaderEpoch: -1})
	if resp, err := adm.CommitOffsets(ctx, "streamed-group", offsets); err != nil || resp.Error() != nil {
		t.Fatalf("commit: %v %v", err, resp.Error())
	}
}

// waitRequestRecorded waits for the registry to hold every request metric
// of the API named: a request's times are recorded after its response is
// written, so the client can return before they are.
func waitRequestRecorded(t *testing.T, reg *prometheus.Registry, api string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		missing := ""
		for _, mf := range families {
			if !strings.HasPrefix(mf.GetName(), "kafka_network_requestmetrics_") || hasLabel(mf, "request", api) {
				continue
			}
			missing = mf.GetName()
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no request=%s series after 10s", missing, api)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func hasLabel(mf *dto.MetricFamily, name, value string) bool {
	for _, m := range mf.Metric {
		for _, l := range m.Label {
			if l.GetName() == name && l.GetValue() == value {
				return true
			}
		}
	}
	return false
}

func scrapeText(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %d %v", resp.StatusCode, err)
	}
	return string(body)
}

func parseMetrics(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return families
}

// seriesOf lists a family's help, type and series (with their values when
// values is set), one a line, sorted.
func seriesOf(mf *dto.MetricFamily, values bool) string {
	lines := []string{mf.GetHelp() + " " + mf.GetType().String()}
	for _, m := range mf.Metric {
		var labels []string
		for _, l := range m.Label {
			labels = append(labels, l.GetName()+"="+l.GetValue())
		}
		line := strings.Join(labels, ",")
		if values {
			line += fmt.Sprintf(" %v %v", m.GetGauge().GetValue(), m.GetCounter().GetValue())
		}
		lines = append(lines, line)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
