package cli

// Progress of the reassignments in progress: ListPartitionReassignments
// says which replicas are being added, DescribeLogDirs how much of its
// partition each already holds. The bar is bytes copied over bytes to
// copy; the estimate divides what is left by the rate seen so far.

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// moveProgress is one sample of the reassignments in progress.
type moveProgress struct {
	at         time.Time
	partitions int   // partitions being reassigned
	total      int64 // bytes the adding replicas must hold
	copied     int64 // bytes they hold
}

// remaining is what is left to copy.
func (m moveProgress) remaining() int64 { return m.total - m.copied }

// sampleProgress reads the reassignments in progress and the replica sizes.
func sampleProgress(ctx context.Context, cl *kgo.Client, adm *kadm.Client, now time.Time) (moveProgress, error) {
	moving, err := listAllReassignments(ctx, cl)
	if err != nil {
		return moveProgress{}, err
	}
	m := moveProgress{at: now}
	if len(moving) == 0 {
		return m, nil
	}
	dirs, err := adm.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		return moveProgress{}, fmt.Errorf("describe log dirs: %w", describe(err))
	}
	v := &clusterView{sizes: dirs}
	moving.Each(func(r kadm.ListPartitionReassignmentsResponse) {
		m.partitions++
		size := v.partitionSize(r.Topic, r.Partition)
		for _, a := range r.AddingReplicas {
			m.total += size
			if d, ok := dirs[a].LookupPartition(r.Topic, r.Partition); ok {
				m.copied += min(d.Size, size)
			}
		}
	})
	return m, nil
}

// progressLine renders a bar, the bytes, the partitions and an estimate
// of the time left from the rate between start and now. The bar is the
// share done since start when sinceStart (moves that completed have left
// now's sample), else now's copied share of the moves in progress.
func progressLine(start, now moveProgress, sinceStart bool) string {
	const width = 30
	done := 1.0
	switch {
	case sinceStart && start.remaining() > 0:
		done = 1 - float64(max(now.remaining(), 0))/float64(start.remaining())
	case !sinceStart && now.total > 0:
		done = float64(now.copied) / float64(now.total)
	}
	done = min(max(done, 0), 1)
	filled := int(done * width)
	bar := strings.Repeat("#", filled) + strings.Repeat(".", width-filled)
	eta := "estimating"
	elapsed := now.at.Sub(start.at)
	if moved := start.remaining() - now.remaining(); moved > 0 && elapsed > 0 {
		rate := float64(moved) / elapsed.Seconds()
		left := time.Duration(float64(max(now.remaining(), 0)) / rate * float64(time.Second))
		eta = fmt.Sprintf("ETA %s (%s/s)", left.Round(time.Second), humanBytes(int64(rate)))
	}
	if now.partitions == 0 {
		eta = "done"
	}
	return fmt.Sprintf("[%s] %3.0f%%  %s left to copy  %d partitions moving  %s",
		bar, done*100, humanBytes(max(now.remaining(), 0)), now.partitions, eta)
}

// progressPrinter writes progress lines: rewritten in place on a terminal,
// one line per update otherwise.
type progressPrinter struct {
	out  io.Writer
	tty  bool
	last time.Time
}

func newProgressPrinter(out io.Writer) *progressPrinter {
	f, ok := out.(*os.File)
	return &progressPrinter{out: out, tty: ok && isTerminal(f)}
}

// show prints line; off a terminal at most every 5 s unless final.
func (p *progressPrinter) show(line string, now time.Time, final bool) {
	if p.tty {
		fmt.Fprint(p.out, "\r\033[K"+line)
		if final {
			fmt.Fprintln(p.out)
		}
		return
	}
	if final || now.Sub(p.last) >= 5*time.Second {
		fmt.Fprintln(p.out, line)
		p.last = now
	}
}

// waitForMoves shows progress until no reassignment is in progress or ctx
// ends. A sample that fails (a broker restarting, a controller election)
// is retried for up to sampleRetryFor: the moves go on in the cluster.
func waitForMoves(ctx context.Context, cl *kgo.Client, adm *kadm.Client, timeout time.Duration, out io.Writer, interval time.Duration) error {
	pp := newProgressPrinter(out)
	var failingSince time.Time
	sample := func() (moveProgress, bool, error) {
		rctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		m, err := sampleProgress(rctx, cl, adm, time.Now())
		switch {
		case err == nil:
			failingSince = time.Time{}
			return m, true, nil
		case ctx.Err() != nil:
			return m, false, ctx.Err()
		case failingSince.IsZero():
			failingSince = time.Now()
		case time.Since(failingSince) > sampleRetryFor:
			return m, false, err
		}
		pp.show(fmt.Sprintf("(retrying: %v)", err), time.Now(), false)
		return m, false, nil
	}
	var start moveProgress
	for started := false; ; {
		now, ok, err := sample()
		if err != nil {
			return err
		}
		if ok && !started {
			start, started = now, true
		}
		if ok && now.partitions == 0 {
			pp.show(progressLine(start, now, true), now.at, true)
			return nil
		}
		if ok {
			pp.show(progressLine(start, now, true), now.at, false)
		}
		select {
		case <-ctx.Done():
			fmt.Fprintln(out)
			return fmt.Errorf("stopped waiting with %d partitions still moving (they keep moving; see --status): %w", now.partitions, ctx.Err())
		case <-time.After(interval):
		}
	}
}

// sampleRetryFor is how long progress samples may keep failing.
const sampleRetryFor = 60 * time.Second
