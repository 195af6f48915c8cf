package cli

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/testbin"
)

// produceTimeout is --timeout of the produce processes below; the command
// must end within it plus produceMargin (process start, a loaded machine).
const (
	produceTimeout = 3 * time.Second
	produceMargin  = 5 * time.Second
)

// produceProcess is `sluice produce` running as a real process with its
// stdin a pipe the test writes to.
type produceProcess struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	acks   chan string // the -v lines, one per acknowledged record
	stderr *testbin.SyncBuffer
	done   chan error // Wait's result
}

func startProduce(t *testing.T, bin string, args ...string) *produceProcess {
	t.Helper()
	p := &produceProcess{cmd: exec.Command(bin, append([]string{"produce"}, args...)...),
		acks: make(chan string, 1<<16), stderr: &testbin.SyncBuffer{}, done: make(chan error, 1)}
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start sluice produce: %v", err)
	}
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			select {
			case p.acks <- s.Text():
			default:
			}
		}
		p.done <- p.cmd.Wait()
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		p.stdin.Close()
	})
	return p
}

// waitExit waits up to limit for the process to end and returns its error
// (non-nil for a non-zero exit) and how long it took.
func (p *produceProcess) waitExit(t *testing.T, limit time.Duration) (error, time.Duration) {
	t.Helper()
	start := time.Now()
	select {
	case err := <-p.done:
		return err, time.Since(start)
	case <-time.After(limit):
		t.Fatalf("sluice produce still running %s later (--timeout %s); stderr:\n%s", limit, produceTimeout, p.stderr.String())
		return nil, 0
	}
}

// TestProduceFailsWhenTheBrokerDies kills -9 the only broker under a
// running `sluice produce` and wants the command to fail within --timeout
// with a message naming the topic and the cause, both while stdin keeps
// bringing records and while it is idle (one record written after the
// kill is then the only one waiting, and the command must not sit in its
// read of stdin).
func TestProduceFailsWhenTheBrokerDies(t *testing.T) {
	bin := testbin.Build(t)
	for _, idle := range []bool{false, true} {
		t.Run(fmt.Sprintf("idle-input=%v", idle), func(t *testing.T) {
			srv := testbin.StartServer(t, bin, testbin.ServerConfig{DataDir: t.TempDir()})
			topic := "dies"
			p := startProduce(t, bin, topic, "-b", srv.Addr(), "--timeout", produceTimeout.String(), "-v")
			writes := make(chan struct{})
			stopWriting := make(chan struct{})
			go func() {
				defer close(writes)
				for i := 0; ; i++ {
					select {
					case <-stopWriting:
						return
					default:
					}
					if _, err := fmt.Fprintf(p.stdin, "record-%d\n", i); err != nil {
						return // the command ended
					}
					time.Sleep(2 * time.Millisecond) // a steady stream, not a burst
				}
			}()
			select {
			case <-p.acks: // the topic exists (auto-created) and records flow
			case err := <-p.done:
				t.Fatalf("sluice produce ended before any record was acknowledged: %v\n%s", err, p.stderr.String())
			case <-time.After(30 * time.Second):
				t.Fatalf("no record acknowledged in 30 s; stderr:\n%s", p.stderr.String())
			}
			if idle {
				close(stopWriting)
				<-writes
			}
			if err := srv.Kill(); err != nil {
				t.Fatalf("kill -9 the broker: %v", err)
			}
			if idle {
				// One record after the kill, so one surely waits; then
				// nothing more, with stdin left open.
				fmt.Fprintln(p.stdin, "last")
			}
			err, took := p.waitExit(t, produceTimeout+produceMargin)
			if err == nil {
				t.Fatalf("sluice produce exited 0 after the broker died; stderr:\n%s", p.stderr.String())
			}
			msg := p.stderr.String()
			if !strings.Contains(msg, "sluice: produce to "+topic+": ") || !strings.Contains(msg, "not delivered") ||
				!strings.Contains(msg, "within "+produceTimeout.String()) {
				t.Fatalf("stderr does not say which records of %s were not delivered within %s:\n%s", topic, produceTimeout, msg)
			}
			if !strings.Contains(msg, "connection refused") && !strings.Contains(msg, "EOF") && !strings.Contains(msg, "reset by peer") {
				t.Fatalf("stderr does not give the cause (the broker is gone):\n%s", msg)
			}
			t.Logf("exited %s after the kill: %s", took.Round(time.Millisecond), strings.TrimSpace(msg))
			if !idle {
				close(stopWriting)
			}
		})
	}
}

// TestProduceFailsWhenNoBrokerAnswers runs `sluice produce` against a
// port nothing listens on: it must fail within --timeout, saying so.
func TestProduceFailsWhenNoBrokerAnswers(t *testing.T) {
	bin := testbin.Build(t)
	addr := fmt.Sprintf("127.0.0.1:%d", testbin.FreePort(t))
	p := startProduce(t, bin, "nobody", "-b", addr, "--timeout", produceTimeout.String())
	fmt.Fprintln(p.stdin, "hello")
	err, _ := p.waitExit(t, produceTimeout+produceMargin)
	if err == nil {
		t.Fatalf("sluice produce exited 0 with no broker; stderr:\n%s", p.stderr.String())
	}
	if msg := p.stderr.String(); !strings.Contains(msg, "sluice: cannot reach brokers "+addr) || !strings.Contains(msg, "connection refused") {
		t.Fatalf("stderr does not say the broker cannot be reached:\n%s", msg)
	}
}

// TestProduceAutoCreatesTopics: on a default server produce creates a
// missing topic (as Kafka's console producer does); on one with
// auto.create.topics.enable=false it fails at once with
// UNKNOWN_TOPIC_OR_PARTITION instead of waiting.
func TestProduceAutoCreatesTopics(t *testing.T) {
	addr := shared.broker(t)
	topic := uniqueTopic(t)
	if out := mustRun(t, "a\nb\n", "produce", topic, "-b", addr, "-v"); strings.Count(out, "offset") != 2 {
		t.Fatalf("produce to a new topic printed %q, want two offsets", out)
	}
	out := mustRun(t, "", "topic", "describe", topic, "-b", addr)
	if !strings.Contains(out, topic) {
		t.Fatalf("topic %s not created by produce:\n%s", topic, out)
	}

	bin := testbin.Build(t)
	srv := testbin.StartServer(t, bin, testbin.ServerConfig{DataDir: t.TempDir(), Overrides: []string{"auto.create.topics.enable=false"}})
	p := startProduce(t, bin, "missing", "-b", srv.Addr(), "--timeout", "20s")
	fmt.Fprintln(p.stdin, "hello")
	p.stdin.Close()
	err, took := p.waitExit(t, 30*time.Second)
	if err == nil {
		t.Fatalf("produce to a missing topic exited 0 with auto-creation off")
	}
	if msg := p.stderr.String(); !strings.Contains(msg, "sluice: produce to missing: UNKNOWN_TOPIC_OR_PARTITION") ||
		!strings.Contains(msg, "auto.create.topics.enable") {
		t.Fatalf("stderr:\n%s\nwant UNKNOWN_TOPIC_OR_PARTITION and a word on auto.create.topics.enable", msg)
	}
	if took > 15*time.Second {
		t.Fatalf("the refusal took %s", took)
	}
}
