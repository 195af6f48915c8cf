package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// machineFacts describes where a run happened.
type machineFacts struct {
	CPU, Cores, Memory, Kernel, Go, Java, Kafka string
}

func collectFacts(repo string) machineFacts {
	f := machineFacts{Cores: strconv.Itoa(runtime.NumCPU())}
	if out, err := exec.Command("lscpu").Output(); err == nil {
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "Model name:"); ok {
				f.CPU = strings.TrimSpace(v)
			}
		}
	}
	if raw, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.SplitSeq(string(raw), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				if kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64); err == nil {
					f.Memory = fmt.Sprintf("%.1f GiB", kb/(1<<20))
				}
			}
		}
	}
	f.Kernel = commandLine("uname", "-sr")
	f.Go = commandLine("go", "version")
	f.Java = commandLine("java", "-version")
	if raw, err := os.ReadFile(filepath.Join(repo, "KAFKA_VERSION")); err == nil {
		f.Kafka = strings.TrimSpace(string(raw))
	}
	return f
}

// commandLine returns the first line a command prints (stdout or stderr: java -version
// writes to stderr), or a note that it failed.
func commandLine(name string, args ...string) string {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("(%s: %v)", name, err)
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return first
}

// machineLimits are the machine's own figures taken in the same run.
type machineLimits struct {
	StorageCommand string
	StorageRows    [][2]string // machine figure label, value as bench/storage printed it
	StorageSection string      // bench/storage's "Machine figures" section, with its commands
	StorageErr     string
	IperfCommand   string
	IperfMBps      []float64
	IperfErr       string
}

// storageFigures are the machine rows of bench/storage's summary that this suite quotes.
var storageFigures = []string{
	"buffered write, no fsync, 1 MiB writes",
	"buffered write, no fsync, 16 KiB writes",
	"write + fdatasync every 1 MiB",
	"page-cache read of a",
}

// measureMachine runs bench/storage (its fio/dd machine figures; it also runs the commit
// log's Go benchmarks, which this report does not quote) and iperf3 over loopback.
func measureMachine(ctx context.Context, repo, scratch string, quick bool, iperfSecs int) machineLimits {
	var m machineLimits
	out := filepath.Join(scratch, "storage.md")
	args := []string{"--out", out}
	if quick {
		args = append([]string{"--quick"}, args...)
	}
	m.StorageCommand = "bench/storage " + strings.Join(args[:len(args)-2], " ")
	cmd := exec.CommandContext(ctx, filepath.Join(repo, "bench", "storage"), args...)
	cmd.Dir = repo
	if combined, err := cmd.CombinedOutput(); err != nil {
		m.StorageErr = fmt.Sprintf("%v: %s", err, truncate(string(combined), 800))
	} else if raw, err := os.ReadFile(out); err != nil {
		m.StorageErr = err.Error()
	} else {
		m.StorageRows, m.StorageSection = parseStorageReport(string(raw))
	}
	m.IperfCommand, m.IperfMBps, m.IperfErr = loopbackTCP(ctx, iperfSecs)
	return m
}

// parseStorageReport picks the quoted machine rows out of bench/storage's summary table
// (columns: Sluice figure, Sluice, machine figure, machine, ratio) and returns its
// "Machine figures" section.
func parseStorageReport(report string) ([][2]string, string) {
	var rows [][2]string
	seen := make(map[string]bool)
	var section strings.Builder
	inSection := false
	for line := range strings.SplitSeq(report, "\n") {
		if strings.HasPrefix(line, "## ") {
			inSection = strings.TrimSpace(line) == "## Machine figures"
			continue
		}
		if inSection {
			section.WriteString(line + "\n")
		}
		cols := strings.Split(line, "|")
		if len(cols) < 6 {
			continue
		}
		label, value := strings.TrimSpace(cols[3]), strings.TrimSpace(cols[4])
		for _, want := range storageFigures {
			if strings.HasPrefix(label, want) && !seen[label] {
				seen[label] = true
				rows = append(rows, [2]string{label, value})
			}
		}
	}
	return rows, strings.Trim(section.String(), "\n")
}

// loopbackTCP runs iperf3 three times over 127.0.0.1 and returns the receiver's MB/s.
func loopbackTCP(ctx context.Context, secs int) (string, []float64, string) {
	if _, err := exec.LookPath("iperf3"); err != nil {
		return "", nil, "iperf3 not found (apt-get install -y iperf3)"
	}
	ports, err := freePorts(1)
	if err != nil {
		return "", nil, err.Error()
	}
	port := strconv.Itoa(ports[0])
	client := []string{"iperf3", "-c", "127.0.0.1", "-p", port, "-t", strconv.Itoa(secs), "-J"}
	command := "iperf3 -s -1 -B 127.0.0.1 -p " + port + " & " + strings.Join(client, " ")
	var vals []float64
	for range 3 {
		v, err := iperfRound(ctx, port, client)
		if err != nil {
			return command, vals, err.Error()
		}
		vals = append(vals, v)
	}
	return command, vals, ""
}

// iperfRound starts a one-off server, waits until it listens, runs the client once and
// makes sure the server is gone afterwards (a one-off server that saw a broken session can
// wait forever).
func iperfRound(ctx context.Context, port string, client []string) (float64, error) {
	server := exec.CommandContext(ctx, "iperf3", "-s", "-1", "-B", "127.0.0.1", "-p", port)
	if err := server.Start(); err != nil {
		return 0, fmt.Errorf("iperf3 server: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = server.Wait()
		close(exited)
	}()
	defer func() {
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = server.Process.Kill()
			<-exited
		}
	}()
	if err := waitListening(ctx, "127.0.0.1:"+port, exited); err != nil {
		return 0, err
	}
	out, err := exec.CommandContext(ctx, client[0], client[1:]...).Output()
	if err != nil {
		return 0, fmt.Errorf("iperf3 client: %v: %s", err, truncate(string(out), 300))
	}
	var res struct {
		End struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return 0, fmt.Errorf("iperf3 JSON: %w", err)
	}
	return res.End.SumReceived.BitsPerSecond / 8 / 1e6, nil
}

// waitListening polls until something accepts on addr. iperf3's one-off server takes a
// connection as its test, so this probe uses ss instead of connecting.
func waitListening(ctx context.Context, addr string, exited <-chan struct{}) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		out, err := exec.CommandContext(ctx, "ss", "-Hltn", "src", addr).Output()
		if err == nil && strings.TrimSpace(string(out)) != "" {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("iperf3 server exited before listening")
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("iperf3 server not listening on %s after 10 s", addr)
}
