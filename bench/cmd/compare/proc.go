package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// clockTicksPerSecond is the unit of utime and stime in /proc/PID/stat. It is 100 on every
// Linux architecture Go supports (USER_HZ is fixed by the kernel ABI), so it is a constant
// rather than a cgo call to sysconf.
const clockTicksPerSecond = 100

// cpuSeconds returns the user plus system CPU time a process has used so far, from
// /proc/PID/stat.
func cpuSeconds(pid int) (float64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read stat of pid %d: %w", pid, err)
	}
	return parseStatCPU(raw)
}

// sumCPUSeconds is cpuSeconds summed over the processes of a cluster.
func sumCPUSeconds(pids []int) (float64, error) {
	var total float64
	for _, pid := range pids {
		s, err := cpuSeconds(pid)
		if err != nil {
			return 0, err
		}
		total += s
	}
	return total, nil
}

// sumPeakRSSBytes is peakRSSBytes summed over the processes of a cluster: each peak is
// its own process's, so the sum bounds the cluster's memory from above.
func sumPeakRSSBytes(pids []int) (int64, error) {
	var total int64
	for _, pid := range pids {
		n, err := peakRSSBytes(pid)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// parseStatCPU reads utime and stime (fields 14 and 15) from a /proc/PID/stat line. The
// command name (field 2) may contain spaces and parentheses, so fields are counted from the
// last ')'.
func parseStatCPU(raw []byte) (float64, error) {
	end := bytes.LastIndexByte(raw, ')')
	if end < 0 {
		return 0, fmt.Errorf("stat line without a command name: %q", truncate(string(raw), 80))
	}
	fields := strings.Fields(string(raw[end+1:]))
	// fields[0] is field 3 (state), so utime (14) is fields[11] and stime (15) fields[12].
	if len(fields) < 13 {
		return 0, fmt.Errorf("stat line has %d fields after the command name, want at least 13", len(fields))
	}
	utime, err := strconv.ParseUint(fields[11], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("utime %q: %w", fields[11], err)
	}
	stime, err := strconv.ParseUint(fields[12], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stime %q: %w", fields[12], err)
	}
	return float64(utime+stime) / clockTicksPerSecond, nil
}

// peakRSSBytes returns VmHWM, the process's peak resident set size, from /proc/PID/status.
func peakRSSBytes(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("open status of pid %d: %w", pid, err)
	}
	defer f.Close()
	return parseVmHWM(f)
}

func parseVmHWM(f io.Reader) (int64, error) {
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("unexpected VmHWM line %q", sc.Text())
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("VmHWM value %q: %w", fields[0], err)
		}
		return kb * 1024, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read status: %w", err)
	}
	return 0, fmt.Errorf("no VmHWM line in status")
}

// processAlive reports whether pid names a process that has not exited. A zombie (exited,
// not yet reaped by its parent) counts as gone.
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	end := bytes.LastIndexByte(raw, ')')
	if end < 0 || end+2 >= len(raw) {
		return false
	}
	return raw[end+2] != 'Z'
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
