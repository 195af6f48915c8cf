package testbin

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// startTimeout bounds how long a server may take to answer its first request.
const startTimeout = 30 * time.Second

// ServerConfig is one single-node `sluice server`: broker and controller in
// one process, its data in DataDir.
type ServerConfig struct {
	DataDir string
	// ClientPort and ControllerPort are 127.0.0.1 ports; 0 picks a free one.
	ClientPort     int
	ControllerPort int
	// Overrides are extra key=value settings, each passed as --override.
	Overrides []string
	// Wrap, when set, runs the server under another command (for example
	// prlimit --nofile=512 --): the server's argv is appended to it.
	Wrap []string
}

// Server is a running single-node `sluice server`.
type Server struct {
	*Process
	addr string
}

// StartServer runs `sluice server` from binary as cfg says and waits until
// it answers ApiVersions; the test fails if it exits or does not answer
// within 30 s. It is killed at the end of the test if still running.
func StartServer(tb testing.TB, binary string, cfg ServerConfig) *Server {
	tb.Helper()
	if cfg.ClientPort == 0 {
		cfg.ClientPort = FreePort(tb)
	}
	if cfg.ControllerPort == 0 {
		cfg.ControllerPort = FreePort(tb)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.ClientPort))
	args := []string{"server",
		"--override", "log.dirs=" + cfg.DataDir,
		"--override", fmt.Sprintf("listeners=PLAINTEXT://%s,CONTROLLER://127.0.0.1:%d", addr, cfg.ControllerPort),
		"--override", fmt.Sprintf("controller.quorum.voters=1@127.0.0.1:%d", cfg.ControllerPort),
	}
	for _, o := range cfg.Overrides {
		args = append(args, "--override", o)
	}
	if len(cfg.Wrap) > 0 {
		args = append(append(cfg.Wrap[1:len(cfg.Wrap):len(cfg.Wrap)], binary), args...)
		binary = cfg.Wrap[0]
	}
	s := &Server{Process: StartProcess(tb, "server "+addr, binary, args...), addr: addr}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	go func() {
		// The process ending stops the wait: no point pinging a dead server.
		select {
		case <-s.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	if err := WaitForAPIVersions(ctx, addr); err != nil {
		if exited, exitErr := s.Exited(); exited {
			tb.Fatalf("server exited at start: %v\n%s", exitErr, s.Logs())
		}
		tb.Fatalf("server not answering after %s: %v\n%s", startTimeout, err, s.Logs())
	}
	return s
}

// Addr is the server's client listener, host:port.
func (s *Server) Addr() string { return s.addr }

// WaitForAPIVersions asks addr for ApiVersions until it answers or ctx ends;
// the error is the last attempt's.
func WaitForAPIVersions(ctx context.Context, addr string) error {
	for {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
		if err != nil {
			return fmt.Errorf("testbin: client for %s: %w", addr, err)
		}
		pingCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err = cl.Ping(pingCtx)
		cancel()
		cl.Close()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testbin: %s does not answer ApiVersions: %w", addr, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
