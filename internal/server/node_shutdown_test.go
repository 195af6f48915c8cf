package server_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A consumer's fetch parked for max.wait.ms=30s in a real node's purgatory
// must not hold the node's stop: the server answers it when draining begins.
// The node runs as the real binary (this package may not import the node).
func TestNodeStopAnswersParkedFetch(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the sluice binary")
	}
	addr, stop := startSluiceBinary(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	created, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "parked")
	if err != nil {
		t.Fatal(err)
	}

	fetch := kmsg.NewPtrFetchRequest()
	fetch.MaxWaitMillis = 30_000
	fetch.MinBytes = 1
	fetch.MaxBytes = 1 << 20
	ft := kmsg.NewFetchRequestTopic()
	// kgo sends its highest version, which names topics by id.
	ft.Topic = "parked"
	ft.TopicID = created.ID
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 1 << 20
	ft.Partitions = append(ft.Partitions, fp)
	fetch.Topics = append(fetch.Topics, ft)
	type answer struct {
		resp kmsg.Response
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := cl.Broker(1).Request(ctx, fetch)
		answered <- answer{resp, err}
	}()
	// The fetch is parked once its request has been read and found no data;
	// give it a moment to get there (if it is not parked yet, the stop is
	// trivially fast and the test proves less, never wrongly fails).
	time.Sleep(500 * time.Millisecond)

	took := stop()
	a := <-answered
	t.Logf("node stopped in %v with a 30s fetch parked; client got err=%v", took, a.err)
	// Without the drain cancelling parked waits, the stop takes the
	// server's 10s shutdown grace; with it, a fraction of a second plus
	// flushing the logs.
	if took > 5*time.Second {
		t.Fatalf("node stop took %v with a fetch parked; want well under the fetch's 30s max wait", took)
	}
	if a.err == nil {
		resp := a.resp.(*kmsg.FetchResponse)
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
			t.Fatalf("parked fetch answered with %+v, want one empty partition without error", resp)
		}
	}
}

// startSluiceBinary builds ./cmd/sluice, runs `sluice server` on free ports
// and returns its address and a stop that sends SIGTERM and returns how long
// the process took to exit.
func startSluiceBinary(t *testing.T) (string, func() time.Duration) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "sluice")
	build := exec.Command("go", "build", "-o", bin, "sluice/cmd/sluice")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build sluice: %v\n%s", err, out)
	}
	kport, cport := freePort(t), freePort(t)
	addr := "127.0.0.1:" + kport
	cmd := exec.Command(bin, "server",
		"--override", "log.dirs="+filepath.Join(dir, "data"),
		"--override", "listeners=PLAINTEXT://"+addr+",CONTROLLER://127.0.0.1:"+cport,
		"--override", "controller.quorum.voters=1@127.0.0.1:"+cport)
	logFile, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var stopped bool
	stop := func() time.Duration {
		if stopped {
			return 0
		}
		stopped = true
		began := time.Now()
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("sluice server exited with %v", err)
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
			t.Error("sluice server still running 30s after SIGTERM")
		}
		return time.Since(began)
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(dir, "server.log")); err == nil {
				t.Logf("server log:\n%s", lastLines(string(b), 30))
			}
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return addr, stop
		}
		select {
		case err := <-exited:
			t.Fatalf("sluice server exited at start: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("sluice server not accepting on %s after 30s", addr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
