package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/sluice-io/sluice/internal/testbin"
	"github.com/twmb/franz-go/pkg/kgo"
)

// serverProcess is one `sluice server` process on fixed ports and a fixed data dir, so a
// killed server can be started again exactly where it was.
type serverProcess struct {
	bin        string
	dataDir    string
	logPath    string
	brokerPort int
	ctrlPort   int

	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has been waited for
	log  *os.File
}

func newServerProcess(bin, workDir string) (*serverProcess, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	return &serverProcess{
		bin:        bin,
		dataDir:    workDir + "/data",
		logPath:    workDir + "/sluice.log",
		brokerPort: ports[0],
		ctrlPort:   ports[1],
	}, nil
}

func (s *serverProcess) bootstrap() string {
	return "127.0.0.1:" + strconv.Itoa(s.brokerPort)
}

// start launches the server and returns once it answers ApiVersions, or fails when the
// process exits or ctx ends first. Its output is appended to one log across restarts.
func (s *serverProcess) start(ctx context.Context) error {
	if s.cmd != nil {
		return errors.New("server already started")
	}
	logFile, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open server log: %w", err)
	}
	fmt.Fprintf(logFile, "==== killtest: starting sluice server at %s\n", time.Now().UTC().Format(time.RFC3339Nano))
	ctrl := "127.0.0.1:" + strconv.Itoa(s.ctrlPort)
	cmd := exec.Command(s.bin, "server",
		"--override", "listeners=PLAINTEXT://"+s.bootstrap()+",CONTROLLER://"+ctrl,
		"--override", "controller.quorum.voters=1@"+ctrl,
		"--override", "log.dirs="+s.dataDir,
	)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("start %s: %w", s.bin, err)
	}
	s.cmd, s.log, s.done = cmd, logFile, make(chan struct{})
	// The waiter goroutine is owned by this serverProcess: it ends when the process does,
	// which kill9 and stop both ensure.
	go func(cmd *exec.Cmd, done chan struct{}) {
		_ = cmd.Wait()
		close(done)
	}(cmd, s.done)
	return s.waitReady(ctx)
}

func (s *serverProcess) waitReady(ctx context.Context) error {
	for {
		select {
		case <-s.done:
			return fmt.Errorf("sluice server exited during start-up (%s)", s.cmd.ProcessState)
		case <-ctx.Done():
			return fmt.Errorf("sluice server not answering ApiVersions at %s: %w", s.bootstrap(), ctx.Err())
		default:
		}
		if s.answers(ctx) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// answers reports whether the broker answers an ApiVersions request (kgo's Ping).
func (s *serverProcess) answers(ctx context.Context) bool {
	client, err := kgo.NewClient(kgo.SeedBrokers(s.bootstrap()))
	if err != nil {
		return false
	}
	defer client.Close()
	pingCtx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	return client.Ping(pingCtx) == nil
}

// kill9 sends SIGKILL and waits until the process is gone.
func (s *serverProcess) kill9() error {
	if s.cmd == nil {
		return errors.New("server not running")
	}
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("SIGKILL pid %d: %w", s.cmd.Process.Pid, err)
	}
	<-s.done
	s.release()
	return nil
}

// stop asks for a graceful shutdown (SIGTERM) and kills after grace.
func (s *serverProcess) stop(grace time.Duration) error {
	if s.cmd == nil {
		return nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		state := s.cmd.ProcessState
		s.release()
		if !state.Success() {
			return fmt.Errorf("sluice server exited after SIGTERM with %s", state)
		}
		return nil
	case <-time.After(grace):
		pid := s.cmd.Process.Pid
		_ = s.kill9()
		return fmt.Errorf("sluice server pid %d ignored SIGTERM for %s; killed", pid, grace)
	}
}

func (s *serverProcess) pid() int {
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

func (s *serverProcess) release() {
	s.log.Close()
	s.cmd, s.log, s.done = nil, nil, nil
}

// freePorts returns n distinct ports free on 127.0.0.1 at the time of the
// call, below the ephemeral range so that a restarted server gets its port.
func freePorts(n int) ([]int, error) { return testbin.FreePorts(n) }
