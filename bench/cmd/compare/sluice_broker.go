package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// sluiceBroker runs `sluice server` from a freshly built binary: combined broker and
// controller, data in its own dir under the suite's scratch dir, free ports.
type sluiceBroker struct {
	command []string // the server command before its --override flags
	extra   []string // more --override flags
	dir     string   // removed by Close
	port    int
	ctrl    int
	sslPort int // a listener named SSL on this port when set (see tls_setup.go)
	proc    *proc
	logPath string
}

func newSluiceBroker(bin, scratch string) (*sluiceBroker, error) {
	dir, err := os.MkdirTemp(scratch, "sluice-")
	if err != nil {
		return nil, fmt.Errorf("sluice session dir: %w", err)
	}
	return &sluiceBroker{command: []string{bin, "server"}, dir: dir, logPath: filepath.Join(dir, "server.log")}, nil
}

// withDebugListener adds Sluice's debug listener (sluice.debug.listener: /metrics and
// net/http/pprof) on a free port and returns its base URL.
func (s *sluiceBroker) withDebugListener() (string, error) {
	ports, err := freePorts(1)
	if err != nil {
		return "", err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	s.extra = append(s.extra, "--override", "sluice.debug.listener="+addr)
	return "http://" + addr, nil
}

func (s *sluiceBroker) System() system    { return sysSluice }
func (s *sluiceBroker) Bootstrap() string { return "127.0.0.1:" + strconv.Itoa(s.port) }
func (s *sluiceBroker) DataDir() string   { return filepath.Join(s.dir, "data") }

func (s *sluiceBroker) Nodes() int  { return 1 }
func (s *sluiceBroker) PIDs() []int { return []int{s.PID()} }

func (s *sluiceBroker) PID() int {
	if s.proc == nil {
		return 0
	}
	return s.proc.pid
}

func (s *sluiceBroker) argv() []string {
	listeners := fmt.Sprintf("PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", s.port, s.ctrl)
	if s.sslPort > 0 {
		listeners += fmt.Sprintf(",SSL://127.0.0.1:%d", s.sslPort)
	}
	return append(append(slices.Clone(s.command),
		"--override", "log.dirs="+s.DataDir(),
		"--override", "listeners="+listeners,
		"--override", fmt.Sprintf("controller.quorum.voters=1@127.0.0.1:%d", s.ctrl),
		// The reference kit sets the same for Kafka, so a group (if used) joins at once.
		"--override", "group.initial.rebalance.delay.ms=0",
	), s.extra...)
}

func (s *sluiceBroker) Start(ctx context.Context) error {
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	s.port, s.ctrl = ports[0], ports[1]
	if err := s.Relaunch(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if _, err := waitAPIVersions(ctx, s.Bootstrap(), s.proc); err != nil {
		return fmt.Errorf("sluice: %w (log %s: %s)", err, s.logPath, tailFile(s.logPath, 800))
	}
	return nil
}

func (s *sluiceBroker) Relaunch() error {
	p, err := startProc(s.argv(), s.logPath, nil)
	if err != nil {
		return fmt.Errorf("sluice: %w", err)
	}
	s.proc = p
	return nil
}

func (s *sluiceBroker) Stop(ctx context.Context) error {
	if err := signalTerm(s.proc); err != nil {
		return err
	}
	return s.proc.wait(ctx)
}

func (s *sluiceBroker) Kill(ctx context.Context) error { return s.proc.kill(ctx) }

func (s *sluiceBroker) Close() error {
	var err error
	if s.proc != nil {
		err = s.proc.terminate(30 * time.Second)
	}
	if rmErr := os.RemoveAll(s.dir); rmErr != nil && err == nil {
		err = fmt.Errorf("remove %s: %w", s.dir, rmErr)
	}
	return err
}

// tailFile returns at most the last n bytes of a file, for error messages.
func tailFile(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "(" + err.Error() + ")"
	}
	off := max(info.Size()-n, 0)
	buf := make([]byte, info.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil {
		return "(" + err.Error() + ")"
	}
	return string(buf)
}
