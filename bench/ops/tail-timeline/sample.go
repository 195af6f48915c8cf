package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// sample is the machine's and the two processes' state at one instant. Counters
// are cumulative; the report takes differences.
type sample struct {
	at            time.Time
	dirtyKB       int64 // /proc/meminfo Dirty
	writebackKB   int64 // /proc/meminfo Writeback
	written       int64 // /proc/vmstat nr_written (pages)
	ioSomeUs      int64 // /proc/pressure/io some total
	ioFullUs      int64 // /proc/pressure/io full total
	cpuSomeUs     int64 // /proc/pressure/cpu some total
	load1         string
	brokerCPU     int64 // utime+stime ticks
	brokerWaitNs  int64 // sum of the broker's threads' run-queue wait (schedstat)
	producerWait  int64 // the same for the producer JVM
	producerCPU   int64
	segments      int      // *.log files in the fixed-rate partition's dir
	brokerD       []string // "thread:wchan" of broker threads in D state
	producerD     []string
	brokerThreads int
	cpuBusy       int64            // /proc/stat: all CPUs' non-idle ticks
	cpuSteal      int64            // /proc/stat: steal ticks (time the hypervisor ran someone else)
	procTicks     map[int]procTick // every process's utime+stime, to name the CPU's other users
}

type procTick struct {
	comm  string
	ticks int64
}

type recorder struct {
	out      string
	broker   *broker
	partDir  string
	producer atomic.Int64

	mu      sync.Mutex
	samples []sample
	events  []event // JVM GC/safepoint lines, added after the run
}

func newRecorder(out string, b *broker, partDir string) *recorder {
	return &recorder{out: out, broker: b, partDir: partDir}
}

func (r *recorder) setProducer(pid int) { r.producer.Store(int64(pid)) }

func (r *recorder) sample(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		s := r.take()
		r.mu.Lock()
		r.samples = append(r.samples, s)
		r.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (r *recorder) take() sample {
	s := sample{at: time.Now()}
	mem := fields("/proc/meminfo")
	s.dirtyKB, s.writebackKB = atoi(mem["Dirty:"]), atoi(mem["Writeback:"])
	s.written = atoi(fields("/proc/vmstat")["nr_written"])
	s.ioSomeUs, s.ioFullUs = psi("/proc/pressure/io")
	s.cpuSomeUs, _ = psi("/proc/pressure/cpu")
	if l := strings.Fields(readString("/proc/loadavg")); len(l) > 0 {
		s.load1 = l[0]
	}
	s.brokerCPU, s.brokerWaitNs, s.brokerD, s.brokerThreads = procState(r.broker.pid)
	if p := int(r.producer.Load()); p > 0 {
		s.producerCPU, s.producerWait, s.producerD, _ = procState(p)
	}
	s.cpuBusy, s.cpuSteal = cpuTicks()
	s.procTicks = allProcs()
	if ents, err := filepath.Glob(filepath.Join(r.partDir, "*.log")); err == nil {
		s.segments = len(ents)
	}
	return s
}

func readString(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// fields maps a "key value" per line file (meminfo, vmstat) to its values.
func fields(path string) map[string]string {
	m := make(map[string]string)
	for _, line := range strings.Split(readString(path), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 {
			m[f[0]] = f[1]
		}
	}
	return m
}

func psi(path string) (some, full int64) {
	for _, line := range strings.Split(readString(path), "\n") {
		i := strings.Index(line, "total=")
		if i < 0 {
			continue
		}
		v := atoi(strings.TrimSpace(line[i+len("total="):]))
		if strings.HasPrefix(line, "some") {
			some = v
		} else {
			full = v
		}
	}
	return some, full
}

// procState sums the process's CPU ticks and its threads' run-queue wait, and
// names each thread in uninterruptible sleep with the kernel function it waits
// in (and the top frames of its kernel stack, which only root can read).
func procState(pid int) (cpu, waitNs int64, dstate []string, threads int) {
	base := fmt.Sprintf("/proc/%d", pid)
	if st := strings.Fields(afterComm(readString(base + "/stat"))); len(st) > 13 {
		cpu = atoi(st[11]) + atoi(st[12])
	}
	tids, _ := os.ReadDir(base + "/task")
	threads = len(tids)
	for _, t := range tids {
		tb := base + "/task/" + t.Name()
		if ss := strings.Fields(readString(tb + "/schedstat")); len(ss) >= 2 {
			waitNs += atoi(ss[1])
		}
		st := afterComm(readString(tb + "/stat"))
		if len(st) == 0 || st[0] != 'D' {
			continue
		}
		comm := strings.TrimSpace(readString(tb + "/comm"))
		dstate = append(dstate, comm+":"+readString(tb+"/wchan")+stackTop(tb+"/stack"))
	}
	sort.Strings(dstate)
	return cpu, waitNs, dstate, threads
}

// afterComm is /proc/.../stat after the ")" closing the command name: the state first.
func afterComm(stat string) string {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 || i+2 > len(stat) {
		return ""
	}
	return stat[i+2:]
}

var stackFrame = regexp.MustCompile(`\] ([a-z_0-9.]+)\+`)

func stackTop(path string) string {
	var names []string
	sc := bufio.NewScanner(strings.NewReader(readString(path)))
	for sc.Scan() && len(names) < 6 {
		if m := stackFrame.FindStringSubmatch(sc.Text()); m != nil {
			names = append(names, m[1])
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "[" + strings.Join(names, "<") + "]"
}

var jvmLine = regexp.MustCompile(`^\[(\d{4}-\d\d-\d\dT[\d:.]+[+-]\d{4})\]\s*(.*)$`)

// addGCLogs reads every JVM's -Xlog file (the producer's and, for Kafka, the
// broker's) into events: GC pauses and safepoints that stopped the world >= 5 ms.
func (r *recorder) addGCLogs(dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "jvm-gc-*.log"))
	for _, f := range files {
		pid := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "jvm-gc-"), ".log")
		who := "jvm" + pid
		if pid == fmt.Sprint(r.broker.pid) {
			who = "broker-jvm"
		} else if pid == fmt.Sprint(r.producer.Load()) {
			who = "producer-jvm"
		}
		for _, line := range strings.Split(readString(f), "\n") {
			m := jvmLine.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			at, err := time.Parse("2006-01-02T15:04:05.000-0700", m[1])
			if err != nil {
				continue
			}
			msg := m[2]
			if ms, ok := pauseMs(msg); !ok || ms < 5 {
				continue
			}
			r.events = append(r.events, event{at: at, kind: who, text: shorten(msg)})
		}
	}
}

var msTail = regexp.MustCompile(`([\d.]+)ms\s*$`)
var safepointTotal = regexp.MustCompile(`Total: (\d+) ns`)

// pauseMs reads a GC pause line's trailing duration or a safepoint line's total.
func pauseMs(msg string) (float64, bool) {
	if m := safepointTotal.FindStringSubmatch(msg); m != nil {
		return float64(atoi(m[1])) / 1e6, true
	}
	if strings.Contains(msg, "Pause") {
		if m := msTail.FindStringSubmatch(msg); m != nil {
			var v float64
			fmt.Sscan(m[1], &v)
			return v, true
		}
	}
	return 0, false
}

func shorten(s string) string {
	if len(s) > 90 {
		return s[:90]
	}
	return s
}

// cpuTicks reads the "cpu" line of /proc/stat: busy = all but idle and iowait.
func cpuTicks() (busy, steal int64) {
	line, _, _ := strings.Cut(readString("/proc/stat"), "\n")
	f := strings.Fields(line)
	if len(f) < 9 {
		return 0, 0
	}
	for i := 1; i < len(f); i++ {
		if i != 4 && i != 5 {
			busy += atoi(f[i])
		}
	}
	return busy, atoi(f[8])
}

// allProcs reads every process's CPU ticks.
func allProcs() map[int]procTick {
	ents, _ := os.ReadDir("/proc")
	m := make(map[int]procTick, len(ents))
	for _, e := range ents {
		pid := int(atoi(e.Name()))
		if pid <= 0 {
			continue
		}
		raw := readString("/proc/" + e.Name() + "/stat")
		open, end := strings.IndexByte(raw, '('), strings.LastIndexByte(raw, ')')
		st := strings.Fields(afterComm(raw))
		if open < 0 || end < open || len(st) < 13 {
			continue
		}
		m[pid] = procTick{comm: raw[open+1 : end], ticks: atoi(st[11]) + atoi(st[12])}
	}
	return m
}

// topOthers names the processes, other than skip, that used the most CPU
// between two samples (ms).
func topOthers(a, b sample, skip ...int) string {
	type use struct {
		name string
		ms   int64
	}
	var us []use
	for pid, t := range b.procTicks {
		if slices.Contains(skip, pid) {
			continue
		}
		d := (t.ticks - a.procTicks[pid].ticks) * 10
		if d >= 20 {
			us = append(us, use{fmt.Sprintf("%s/%d", t.comm, pid), d})
		}
	}
	sort.Slice(us, func(i, j int) bool { return us[i].ms > us[j].ms })
	var out []string
	for i := 0; i < len(us) && i < 4; i++ {
		out = append(out, fmt.Sprintf("%s:%d", us[i].name, us[i].ms))
	}
	return strings.Join(out, " ")
}
