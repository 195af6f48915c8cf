package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

type report struct {
	c            config
	windows      []window
	rec          *recorder
	load0, load1 string
	gctrace      []event
}

func (r report) events() []event {
	ev := append(append([]event(nil), r.gctrace...), r.rec.events...)
	sort.Slice(ev, func(i, j int) bool { return ev[i].at.Before(ev[j].at) })
	return ev
}

func (r report) write() error {
	f, err := os.Create(filepath.Join(r.c.out, "timeline.tsv"))
	if err != nil {
		return err
	}
	defer f.Close()
	r.table(f, r.rec.samples, r.windows)
	ef, err := os.Create(filepath.Join(r.c.out, "events.tsv"))
	if err != nil {
		return err
	}
	defer ef.Close()
	for _, e := range r.events() {
		fmt.Fprintf(ef, "%s\t%s\t%s\n", stamp(e.at), e.kind, e.text)
	}
	sum, _ := os.ReadFile(filepath.Join(r.c.out, "perf-test.log"))
	fmt.Printf("system %s rate %d load at start %s, at end %s\n", r.c.system, r.c.rate, r.load0, r.load1)
	for _, l := range strings.Split(string(sum), "\n") {
		if strings.Contains(l, "99.9th") {
			fmt.Println(l)
		}
	}
	r.spikes(os.Stdout)
	return nil
}

// table prints one row per sample: the change since the previous sample, and the
// perf-test window read in that interval.
func (r report) table(w io.Writer, ss []sample, ws []window) {
	fmt.Fprintln(w, "time\tlat_avg_ms\tlat_max_ms\tacked\tdirty_MB\twriteback_MB\twritten_MB\tpsi_io_some_ms\tpsi_io_full_ms\tpsi_cpu_some_ms\tload1\tbroker_cpu_ms\tbroker_runq_ms\tproducer_cpu_ms\tproducer_runq_ms\tsegments\tcpu_busy_ms\tsteal_ms\tother_cpu_ms\tevents\tbroker_D\tproducer_D")
	ev := r.events()
	wi, ei := 0, 0
	for i := 1; i < len(ss); i++ {
		a, b := ss[i-1], ss[i]
		lat := "\t\t"
		for wi < len(ws) && !ws[wi].at.After(b.at) {
			if ws[wi].at.After(a.at) {
				lat = fmt.Sprintf("%.1f\t%.0f\t%d", ws[wi].avgMs, ws[wi].maxMs, ws[wi].records)
			}
			wi++
		}
		var evs []string
		for ei < len(ev) && !ev[ei].at.After(b.at) {
			if ev[ei].at.After(a.at) {
				evs = append(evs, ev[ei].kind+" "+ev[ei].text)
			}
			ei++
		}
		fmt.Fprintf(w, "%s\t%s\t%.0f\t%.0f\t%.1f\t%.1f\t%.1f\t%.1f\t%s\t%d\t%.1f\t%d\t%.1f\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n",
			stamp(b.at), lat, float64(b.dirtyKB)/1024, float64(b.writebackKB)/1024,
			float64(b.written-a.written)*4096/1e6,
			float64(b.ioSomeUs-a.ioSomeUs)/1e3, float64(b.ioFullUs-a.ioFullUs)/1e3, float64(b.cpuSomeUs-a.cpuSomeUs)/1e3,
			b.load1, (b.brokerCPU-a.brokerCPU)*10, float64(b.brokerWaitNs-a.brokerWaitNs)/1e6,
			(b.producerCPU-a.producerCPU)*10, float64(b.producerWait-a.producerWait)/1e6,
			b.segments, (b.cpuBusy-a.cpuBusy)*10, (b.cpuSteal-a.cpuSteal)*10, topOthers(a, b, r.rec.broker.pid, int(r.rec.producer.Load()), os.Getpid()),
			strings.Join(evs, "; "), strings.Join(b.brokerD, " "), strings.Join(b.producerD, " "))
	}
}

// spikes prints the samples around the worst windows: from the send time of the
// slowest record in the window (its end minus its maximum latency) to the end.
func (r report) spikes(w io.Writer) {
	ws := append([]window(nil), r.windows...)
	sort.Slice(ws, func(i, j int) bool { return ws[i].maxMs > ws[j].maxMs })
	var picked []window
	for _, c := range ws {
		if len(picked) == r.c.top {
			break
		}
		overlap := false
		for _, p := range picked {
			if absDur(p.at.Sub(c.at)) < time.Duration(p.maxMs+c.maxMs)*time.Millisecond {
				overlap = true
			}
		}
		if !overlap {
			picked = append(picked, c)
		}
	}
	ss := r.rec.samples
	for _, p := range picked {
		from := p.at.Add(-time.Duration(p.maxMs)*time.Millisecond - 2*r.c.interval)
		fmt.Fprintf(w, "\n== window ending %s: max %.0f ms, avg %.1f ms\n", stamp(p.at), p.maxMs, p.avgMs)
		var sub []sample
		for i, s := range ss {
			if i > 0 && s.at.After(from) && !s.at.After(p.at.Add(r.c.interval)) {
				if len(sub) == 0 {
					sub = append(sub, ss[i-1])
				}
				sub = append(sub, s)
			}
		}
		r.table(w, sub, r.windows)
	}
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
