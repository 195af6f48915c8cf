package integration

import (
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/testbin"
)

// server is one running sluice process.
type server struct {
	t    *testing.T
	addr string
	proc *testbin.Server
}

func freePort(t *testing.T) int {
	t.Helper()
	return testbin.FreePort(t)
}

// startServer runs `sluice server` with its data in dataDir on the given
// client port and waits until it answers ApiVersions. The process is killed
// in t.Cleanup if still running. overrides are extra key=value settings.
func startServer(t *testing.T, dataDir string, port int, overrides ...string) *server {
	t.Helper()
	proc := testbin.StartServer(t, binaryPath, testbin.ServerConfig{DataDir: dataDir, ClientPort: port, Overrides: overrides})
	return &server{t: t, addr: proc.Addr(), proc: proc}
}

// stop sends SIGTERM and waits for a clean exit.
func (s *server) stop() {
	s.t.Helper()
	if err := s.proc.Stop(30 * time.Second); err != nil {
		s.t.Fatalf("server %s: %v\n%s", s.addr, err, s.proc.Logs())
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *server) kill() {
	s.t.Helper()
	if err := s.proc.Kill(); err != nil {
		s.t.Fatal(err)
	}
}
