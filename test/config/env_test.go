package config

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/testbin"
)

func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports, err := testbin.FreePorts(n)
	if err != nil {
		t.Fatal(err)
	}
	return ports
}

// brokerConfig reads one key of broker 1 with DescribeConfigs.
func brokerConfig(t *testing.T, addr, key string) string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := kadm.NewClient(cl).DescribeBrokerConfigs(ctx, 1)
	if err != nil || len(res) != 1 {
		t.Fatalf("describe broker configs: %v (%d resources)", err, len(res))
	}
	for _, c := range res[0].Configs {
		if c.Key == key {
			return c.MaybeValue()
		}
	}
	t.Fatalf("broker 1 reports no %s", key)
	return ""
}

// TestConfigEnvListensWhereTold: with --config-env the node takes its listeners, voters,
// log dir and metrics listener from KAFKA_* and SLUICE_* variables, as a container would
// give them; the environment beats the file and --override beats the environment; a
// misspelt variable is logged with its suggestion, and the JVM's variables are ignored.
func TestConfigEnvListensWhereTold(t *testing.T) {
	ports := freePorts(t, 3)
	client := fmt.Sprintf("127.0.0.1:%d", ports[0])
	metrics := fmt.Sprintf("127.0.0.1:%d", ports[2])
	dir := t.TempDir()
	file := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(file, []byte("num.partitions=2\nlog.retention.bytes=111\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KAFKA_LISTENERS", fmt.Sprintf("PLAINTEXT://%s,CONTROLLER://127.0.0.1:%d", client, ports[1]))
	t.Setenv("KAFKA_CONTROLLER_QUORUM_VOTERS", fmt.Sprintf("1@127.0.0.1:%d", ports[1]))
	t.Setenv("KAFKA_LOG_DIRS", filepath.Join(dir, "data"))
	t.Setenv("KAFKA_NUM_PARTITIONS", "5")
	t.Setenv("KAFKA_LOG_RETENTION_BYTES", "222")
	t.Setenv("KAFKA_LOG_RETENTION_HOURZ", "5")
	t.Setenv("KAFKA_HEAP_OPTS", "-Xmx1G")
	t.Setenv("SLUICE_METRICS_LISTENER", metrics)

	p := testbin.StartProcess(t, "server --config-env", binaryPath, "server", "--config-env",
		"--config", file, "--override", "log.retention.bytes=333")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := testbin.WaitForAPIVersions(ctx, client); err != nil {
		t.Fatalf("no answer on %s, where KAFKA_LISTENERS put the client listener: %v", client, err)
	}
	if got := brokerConfig(t, client, "num.partitions"); got != "5" {
		t.Errorf("num.partitions = %s, want the environment's 5 over the file's 2", got)
	}
	if got := brokerConfig(t, client, "log.retention.bytes"); got != "333" {
		t.Errorf("log.retention.bytes = %s, want --override's 333 over the environment's 222", got)
	}
	resp, err := http.Get("http://" + metrics + "/healthz")
	if err != nil {
		t.Fatalf("SLUICE_METRICS_LISTENER %s: %v", metrics, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz on %s: %s", metrics, resp.Status)
	}
	want := "unknown configuration key log.retention.hourz (set by KAFKA_LOG_RETENTION_HOURZ; did you mean log.retention.hours?)"
	if logs := p.Logs(); strings.Count(logs, want) != 1 || strings.Contains(logs, "heap.opts") {
		t.Errorf("want the warning %q once and nothing of KAFKA_HEAP_OPTS in the log", want)
	}
	if err := p.Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}
}

// TestEnvironmentIgnoredWithoutConfigEnv: without the flag, KAFKA_* variables set nothing
// (an unusable KAFKA_LISTENERS would stop start-up).
func TestEnvironmentIgnoredWithoutConfigEnv(t *testing.T) {
	t.Setenv("KAFKA_LISTENERS", "not a listener")
	t.Setenv("KAFKA_NUM_PARTITIONS", "5")
	s := testbin.StartServer(t, binaryPath, testbin.ServerConfig{DataDir: t.TempDir()})
	if got := brokerConfig(t, s.Addr(), "num.partitions"); got != "1" {
		t.Errorf("num.partitions = %s, want Kafka's default 1", got)
	}
	if err := s.Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}
}

// TestStrictConfigRefusesBeforeFormatting: --strict-config ends start-up with one message
// listing every unknown key, from the file, the environment and --override, before the log
// dir is formatted or a port bound.
func TestStrictConfigRefusesBeforeFormatting(t *testing.T) {
	ports := freePorts(t, 2)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	file := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(file, []byte("num.partitons=3\nnum.io.threads=4\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLUICE_METRICS_LISTNER", "127.0.0.1:1")
	args := []string{"server", "--config-env", "--config", file,
		"--override", "log.dirs=" + data,
		"--override", fmt.Sprintf("listeners=PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", ports[0], ports[1]),
		"--override", fmt.Sprintf("controller.quorum.voters=1@127.0.0.1:%d", ports[1]),
		"--override", "log.retention.hourz=5"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binaryPath, append([]string{args[0], "--strict-config"}, args[1:]...)...)
	cmd.Env = append(os.Environ(), "CLUSTER_ID=5L6g3nShT-eMCtK--X86sw") // would format the log dir
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("started with unknown keys:\n%s", out)
	}
	if ctx.Err() != nil {
		t.Fatalf("still running after 30 s:\n%s", out)
	}
	want := "refusing to start (--strict-config): 3 unknown configuration key(s):\n" +
		"  log.retention.hourz (did you mean log.retention.hours?)\n" +
		"  num.partitons (did you mean num.partitions?)\n" +
		"  sluice.metrics.listner (set by SLUICE_METRICS_LISTNER; did you mean sluice.metrics.listener?)\n"
	if !strings.Contains(string(out), want) {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("the log dir exists after the refusal (%v): it was formatted", err)
	}

	// The same keys without the flag: a warning each, and the node starts.
	p := testbin.StartProcess(t, "server without --strict-config", binaryPath, args...)
	if err := testbin.WaitForAPIVersions(ctx, fmt.Sprintf("127.0.0.1:%d", ports[0])); err != nil {
		t.Fatalf("the node did not start without --strict-config: %v", err)
	}
	if n := strings.Count(p.Logs(), "unknown configuration key"); n != 3 {
		t.Errorf("%d warnings, want 3", n)
	}
	if err := p.Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}
}
