package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluice-io/sluice/internal/testbin"
)

// testBrokersEnv points the command tests at a running broker (for example
// the reference Kafka from bench/kafka-ref) instead of a sluice server
// built and started by the tests.
const testBrokersEnv = "SLUICE_TEST_BROKERS"

// testServer is one `sluice server` process shared by the tests of this
// package, started on first use and stopped by TestMain.
type testServer struct {
	// overrides are extra --override key=value for this server alone.
	overrides []string

	once    sync.Once
	addr    string
	skipMsg string // why no server can be had yet (it does not build)
	failMsg string // why the server that was built did not come up
	cmd     *exec.Cmd
	dir     string
	log     bytes.Buffer
}

// broker returns the bootstrap address of a live broker, or skips the test
// with the reason when none can be had (the server does not build yet).
func (s *testServer) broker(t *testing.T) string {
	t.Helper()
	s.once.Do(s.start)
	if s.skipMsg != "" {
		t.Skip(s.skipMsg)
	}
	if s.failMsg != "" {
		t.Fatal(s.failMsg)
	}
	return s.addr
}

func (s *testServer) start() {
	if addr := os.Getenv(testBrokersEnv); addr != "" {
		s.addr = addr
		return
	}
	dir, err := os.MkdirTemp("", "sluice-cli-test")
	if err != nil {
		s.skipMsg = "temp dir: " + err.Error()
		return
	}
	s.dir = dir
	bin, err := testbin.BuildOnce()
	if err != nil {
		s.skipMsg = fmt.Sprintf("sluice server does not build yet, so the commands cannot be run against it: %v", err)
		return
	}
	ports, err := testbin.FreePorts(2)
	if err != nil {
		s.skipMsg = "free ports: " + err.Error()
		return
	}
	s.addr = fmt.Sprintf("127.0.0.1:%d", ports[0])
	s.cmd = exec.Command(bin, "server",
		"--override", fmt.Sprintf("listeners=PLAINTEXT://%s,CONTROLLER://127.0.0.1:%d", s.addr, ports[1]),
		"--override", fmt.Sprintf("controller.quorum.voters=1@127.0.0.1:%d", ports[1]),
		"--override", "log.dirs="+filepath.Join(dir, "data"))
	for _, o := range s.overrides {
		s.cmd.Args = append(s.cmd.Args, "--override", o)
	}
	s.cmd.Stdout = &s.log
	s.cmd.Stderr = &s.log
	if err := s.cmd.Start(); err != nil {
		s.skipMsg = "start sluice server: " + err.Error()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := testbin.WaitForAPIVersions(ctx, s.addr); err != nil {
		s.stop()
		s.failMsg = fmt.Sprintf("sluice server at %s did not come up: %v\n%s", s.addr, err, s.log.String())
	}
}

// stop ends the server process (by its PID, through the exec handle) and
// removes its files.
func (s *testServer) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			s.cmd.Process.Kill()
			<-done
		}
		s.cmd = nil
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// shared is the test binary's one server: started by the first test that
// needs it, stopped by TestMain.
var shared testServer

func TestMain(m *testing.M) {
	code := m.Run()
	shared.stop()
	os.Exit(code)
}

// runCLI executes the command line in process with the given stdin and
// returns stdout and the command's error.
func runCLI(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	root := &cobra.Command{Use: "sluice", SilenceUsage: true, SilenceErrors: true}
	AddCommands(root)
	var out, errOut bytes.Buffer
	root.SetArgs(args)
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&out)
	root.SetErr(&errOut)
	err := root.ExecuteContext(ctx)
	return out.String(), err
}

// mustRun is runCLI that fails the test on an error.
func mustRun(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, err := runCLI(t, stdin, args...)
	if err != nil {
		t.Fatalf("sluice %s: %v\noutput:\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// uniqueTopic names a topic for one test, so runs against a long-lived
// broker do not collide.
func uniqueTopic(t *testing.T) string {
	name := strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())
	return fmt.Sprintf("%s-%d", strings.ToLower(name), time.Now().UnixNano()%1_000_000)
}
