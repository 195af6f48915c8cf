package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/testbin"
	"github.com/sluice-io/sluice/internal/testutil"
)

// maxStartupLines bounds what a default single node prints at INFO from
// its first line to "node started": a short story, not a line per
// partition.
const maxStartupLines = 25

// TestStartupLogStory runs real `sluice server` processes: a first start on
// a new dir, a restart with three topics and __consumer_offsets present,
// and a restart after kill -9. Each prints a short story at INFO (version,
// node and roles, pid, data dir, listeners, "node started"), raft names
// node 1 as 1, only the restart after kill -9 says clean_shutdown=false,
// a graceful stop ends with "shut down completed", and the CONTROLLER
// listener answers `sluice cluster quorum --bootstrap-controller`.
func TestStartupLogStory(t *testing.T) {
	bin := testbin.Build(t)
	dir := t.TempDir()
	cfg := testbin.ServerConfig{DataDir: dir, ClientPort: testbin.FreePort(t), ControllerPort: testbin.FreePort(t)}

	s := testbin.StartServer(t, bin, cfg)
	first := startupLines(t, s)
	t.Logf("first start, %d lines:\n%s", len(first), strings.Join(first, "\n"))
	checkStory(t, "first start", first, s.Pid(), cfg)
	mustHave(t, "first start", first, "formatted "+dir+" with cluster id ", `msg="loaded log dir"`)
	mustNotHave(t, "first start", first, "clean_shutdown")
	makeTopicsAndGroup(t, s.Addr())
	out, err := exec.Command(bin, "cluster", "quorum", "--bootstrap-controller", "127.0.0.1:"+strconv.Itoa(cfg.ControllerPort)).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "LEADER") || !regexp.MustCompile(`(?m)^1\s+leader`).Match(out) {
		t.Fatalf("cluster quorum --bootstrap-controller on the CONTROLLER listener: %v\n%s", err, out)
	}
	t.Logf("sluice cluster quorum --bootstrap-controller:\n%s", out)
	stopGracefully(t, s)

	s = testbin.StartServer(t, bin, cfg)
	restart := startupLines(t, s)
	t.Logf("restart, %d lines:\n%s", len(restart), strings.Join(restart, "\n"))
	checkStory(t, "restart", restart, s.Pid(), cfg)
	mustHave(t, "restart", restart, "clean_shutdown=true")
	mustNotHave(t, "restart", restart, "formatted ", "__consumer_offsets", "clean_shutdown=false")
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}

	s = testbin.StartServer(t, bin, cfg)
	unclean := startupLines(t, s)
	checkStory(t, "restart after kill -9", unclean, s.Pid(), cfg)
	mustHave(t, "restart after kill -9", unclean, "unclean shutdown", "clean_shutdown=false")
	stopGracefully(t, s)
}

// startupLines waits for "node started" and returns the lines up to it.
func startupLines(t *testing.T, s *testbin.Server) []string {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, func() bool { return strings.Contains(s.Logs(), `msg="node started"`) },
		"no \"node started\" line:\n%s", s.Logs())
	var out []string
	for _, line := range strings.Split(s.Logs(), "\n") {
		out = append(out, line)
		if strings.Contains(line, `msg="node started"`) {
			break
		}
	}
	return out
}

func checkStory(t *testing.T, what string, lines []string, pid int, cfg testbin.ServerConfig) {
	t.Helper()
	if len(lines) > maxStartupLines {
		t.Errorf("%s printed %d lines before \"node started\", want at most %d", what, len(lines), maxStartupLines)
	}
	if !strings.Contains(lines[0], `msg="starting node" version=`) || !strings.Contains(lines[0], "node_id=1 roles=broker,controller") ||
		!strings.Contains(lines[0], "log_dirs="+cfg.DataDir) || !strings.Contains(lines[0], fmt.Sprintf("pid=%d", pid)) {
		t.Errorf("%s: first line %q does not say version, node, roles, dir and pid", what, lines[0])
	}
	mustHave(t, what, lines,
		"listener=CONTROLLER address=127.0.0.1:"+strconv.Itoa(cfg.ControllerPort),
		"listener=PLAINTEXT address=127.0.0.1:"+strconv.Itoa(cfg.ClientPort),
		`msg="1 became leader at term`,
		`msg="node started" node_id=1`,
	)
	mustNotHave(t, what, lines, `msg="2 became`, "level=ERROR")
}

func mustHave(t *testing.T, what string, lines []string, wants ...string) {
	t.Helper()
	all := strings.Join(lines, "\n")
	for _, w := range wants {
		if !strings.Contains(all, w) {
			t.Errorf("%s: no line has %q", what, w)
		}
	}
}

func mustNotHave(t *testing.T, what string, lines []string, unwanted ...string) {
	t.Helper()
	for _, line := range lines {
		for _, u := range unwanted {
			if strings.Contains(line, u) {
				t.Errorf("%s: unexpected %q in %q", what, u, line)
			}
		}
	}
}

// makeTopicsAndGroup creates three topics and commits a group offset,
// which creates __consumer_offsets.
func makeTopicsAndGroup(t *testing.T, addr string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := adm.CreateTopics(ctx, 1, 1, nil, "a", "b", "c"); err != nil {
		t.Fatal(err)
	}
	var offsets kadm.Offsets
	offsets.Add(kadm.Offset{Topic: "a", Partition: 0, At: 0, LeaderEpoch: -1})
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		resp, err := adm.CommitOffsets(ctx, "g", offsets)
		if err != nil {
			return err
		}
		return resp.Error()
	}, "commit a group offset")
}

func stopGracefully(t *testing.T, s *testbin.Server) {
	t.Helper()
	if err := s.Stop(30 * time.Second); err != nil {
		t.Fatalf("stop: %v\n%s", err, s.Logs())
	}
	lines := strings.Split(strings.TrimSpace(s.Logs()), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, `msg="shut down completed" node_id=1`) {
		t.Fatalf("last line after SIGTERM %q, want \"shut down completed\"", last)
	}
}

// TestBusyPortLeavesNoDataDir: a second server whose client port (or
// debug listener's) is taken fails naming the listener and leaves its (new)
// data dir uncreated.
func TestBusyPortLeavesNoDataDir(t *testing.T) {
	bin := testbin.Build(t)
	first := testbin.StartServer(t, bin, testbin.ServerConfig{DataDir: t.TempDir()})
	free := func() string { return "127.0.0.1:" + strconv.Itoa(testbin.FreePort(t)) }
	for _, c := range []struct {
		name, client, debug string
		clusterIDEnv        bool // --config-env with $CLUSTER_ID, which formats before the node is built
	}{
		{"PLAINTEXT", first.Addr(), free(), false},
		{"sluice.debug.listener", free(), first.Addr(), false},
		{"PLAINTEXT", first.Addr(), free(), true},
	} {
		second := filepath.Join(t.TempDir(), "second")
		cmd := exec.Command(bin, "server", "--override", "log.dirs="+second, "--debug-addr", c.debug,
			"--override", fmt.Sprintf("listeners=PLAINTEXT://%s,CONTROLLER://%s", c.client, free()))
		if c.clusterIDEnv {
			cmd.Args = append(cmd.Args, "--config-env")
			cmd.Env = append(os.Environ(), "CLUSTER_ID=MkU3OEVBNTcwNTJENDM2Qg")
		}
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("a second server with %s on %s started:\n%s", c.name, first.Addr(), out)
		}
		if !strings.Contains(string(out), "listener "+c.name+": listen tcp "+first.Addr()) || !strings.Contains(string(out), "address already in use") {
			t.Errorf("the refusal does not name the busy listener %s:\n%s", c.name, out)
		}
		if _, err := os.Stat(second); !os.IsNotExist(err) {
			t.Errorf("the failed start (%s busy) left %s (stat: %v)", c.name, second, err)
		}
	}
}
