package integration

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/testcluster"
)

// pprofDirEnv names a directory: when set, the replication benchmarks give
// every node a debug listener on an ephemeral port and save CPU profiles of
// the measured phases there, one file per node and phase.
const pprofDirEnv = "SLUICE_BENCH_PPROF_DIR"

// withDebugListener adds an ephemeral debug listener to overrides when
// profiles are asked for.
func withDebugListener(overrides map[string]string) map[string]string {
	if os.Getenv(pprofDirEnv) == "" {
		return overrides
	}
	out := maps.Clone(overrides)
	if out == nil {
		out = map[string]string{}
	}
	out["sluice.debug.listener"] = "127.0.0.1:0"
	return out
}

var consoleAddrPattern = regexp.MustCompile(`msg="console listening"[^\n]*? address=(\S+)`)

// debugAddrs are the debug listener addresses the running nodes logged
// (the last one each logged, as a restarted node logs it again).
func debugAddrs(c *testcluster.Processes) map[int]string {
	out := map[int]string{}
	for i := range c.Layout.Nodes {
		m := consoleAddrPattern.FindAllStringSubmatch(c.Logs(i), -1)
		if len(m) > 0 {
			out[i] = m[len(m)-1][1]
		}
	}
	return out
}

// cpuProfiles starts a CPU profile of d on every running node and returns
// a wait function that saves them as <dir>/<name>-node<id>.pprof. Without
// SLUICE_BENCH_PPROF_DIR it does nothing.
func cpuProfiles(b *testing.B, c *testcluster.Processes, name string, d time.Duration) (wait func()) {
	b.Helper()
	dir := os.Getenv(pprofDirEnv)
	if dir == "" {
		return func() {}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatalf("profile dir: %v", err)
	}
	var wg sync.WaitGroup
	for i, addr := range debugAddrs(c) {
		path := filepath.Join(dir, fmt.Sprintf("%s-node%d.pprof", name, c.Layout.Nodes[i].ID))
		wg.Go(func() {
			if err := saveCPUProfile(addr, path, d); err != nil {
				b.Logf("profile of node %d: %v", i+1, err)
			}
		})
	}
	return wg.Wait
}

func saveCPUProfile(addr, path string, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d+30*time.Second)
	defer cancel()
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(d.Seconds()))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("get %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("get %s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("save %s: %w", path, err)
	}
	return f.Close()
}
