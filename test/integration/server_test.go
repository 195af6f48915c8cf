package integration

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// server is one running sluice process.
type server struct {
	t    *testing.T
	addr string
	cmd  *exec.Cmd
	logs *syncBuffer
	done chan error
}

// syncBuffer collects the process's stderr for failure reports.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startServer runs `sluice server` with its data in dataDir on the given
// client port and waits until it answers ApiVersions. The process is killed
// in t.Cleanup if still running. overrides are extra key=value settings.
func startServer(t *testing.T, dataDir string, port int, overrides ...string) *server {
	t.Helper()
	controllerPort := freePort(t)
	s := &server{t: t, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), logs: &syncBuffer{}, done: make(chan error, 1)}
	s.cmd = exec.Command(binaryPath, "server",
		"--override", "log.dirs="+dataDir,
		"--override", fmt.Sprintf("listeners=PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", port, controllerPort),
		"--override", fmt.Sprintf("controller.quorum.voters=1@127.0.0.1:%d", controllerPort),
	)
	for _, o := range overrides {
		s.cmd.Args = append(s.cmd.Args, "--override", o)
	}
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			s.cmd.Process.Kill()
			<-s.done
		}
		if t.Failed() {
			t.Logf("server %s log:\n%s", s.addr, s.logs.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		cl, err := kgo.NewClient(kgo.SeedBrokers(s.addr))
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			err = cl.Ping(ctx)
			cancel()
			cl.Close()
		}
		if err == nil {
			return s
		}
		select {
		case exit := <-s.done:
			s.done <- exit
			t.Fatalf("server exited at start: %v\n%s", exit, s.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not answering after 30s: %v\n%s", err, s.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop sends SIGTERM and waits for a clean exit.
func (s *server) stop() {
	s.t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		s.t.Fatal(err)
	}
	select {
	case err := <-s.done:
		if err != nil {
			s.t.Fatalf("server exit after SIGTERM: %v\n%s", err, s.logs.String())
		}
	case <-time.After(30 * time.Second):
		s.t.Fatalf("server still running 30s after SIGTERM\n%s", s.logs.String())
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *server) kill() {
	s.t.Helper()
	if err := s.cmd.Process.Kill(); err != nil {
		s.t.Fatal(err)
	}
	<-s.done
}
