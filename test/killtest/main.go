// Command killtest is the kill -9 test for a single `sluice server`: a franz-go producer
// with its default settings (acks=all, idempotent, unlimited retries) keeps sending numbered
// records while the server is SIGKILLed and restarted on the same data dir twice, about
// two seconds apart (each kill waits, if need be, until the restarted server has
// acknowledged something, so every kill lands on live traffic); the producer retries
// through each outage. At the end every
// acknowledged record must read back exactly once, at the offset it was acknowledged
// with, in send order per partition, and again after a clean stop and restart; and
// records must have been acknowledged after each restart (the producer got through the
// outage, not just before it).
//
//	go run ./test/killtest --bin /path/to/sluice
//
// Exit status 0 on success, 1 on any failed check, 2 on usage errors. Bounded by --timeout.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

type options struct {
	bin        string
	partitions int
	phase      time.Duration
	rate       int
	resumeWait time.Duration
	timeout    time.Duration
	keep       bool
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "", "the sluice binary (required)")
	flag.IntVar(&o.partitions, "partitions", 3, "partitions of the test topic")
	flag.DurationVar(&o.phase, "phase", 2*time.Second, "producing time before each kill and after the last restart")
	flag.IntVar(&o.rate, "rate", 1000, "records per second the producer offers")
	flag.DurationVar(&o.resumeWait, "resume-wait", 12*time.Second, "how long past --phase to wait for the first acknowledgement of a phase")
	flag.DurationVar(&o.timeout, "timeout", 55*time.Second, "bound on the whole test")
	flag.BoolVar(&o.keep, "keep", false, "keep the work dir (data and server log) even on success")
	flag.Parse()
	if o.bin == "" || o.partitions < 1 || o.phase <= 0 || o.rate < 1 || o.resumeWait < 0 {
		flag.Usage()
		os.Exit(2)
	}
	os.Exit(run(o))
}

func say(format string, args ...any) {
	fmt.Printf("killtest: "+format+"\n", args...)
}

func run(o options) int {
	work, err := os.MkdirTemp("", "sluice-killtest.")
	if err != nil {
		say("FAIL: %v", err)
		return 1
	}
	srv, err := newServerProcess(o.bin, work)
	if err != nil {
		say("FAIL: %v", err)
		return 1
	}
	problems := killTest(o, srv)
	if err := srv.stop(15 * time.Second); err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) == 0 {
		if !o.keep {
			os.RemoveAll(work)
		}
		say("PASS")
		return 0
	}
	const shown = 20
	for i, p := range problems {
		if i == shown {
			say("... and %d more", len(problems)-shown)
			break
		}
		say("FAIL: %s", p)
	}
	printLogTail(srv.logPath, 40)
	say("work dir kept for inspection: %s", work)
	return 1
}

// killTest runs the scenario and returns what went wrong (nothing on success).
func killTest(o options, srv *serverProcess) []string {
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	const topic = "killtest"
	started := time.Now()
	since := func() string { return time.Since(started).Round(100 * time.Millisecond).String() }

	if err := srv.start(ctx); err != nil {
		return []string{err.Error()}
	}
	say("[%s] server pid %d up at %s, data %s", since(), srv.pid(), srv.bootstrap(), srv.dataDir)
	if err := createTopic(ctx, srv.bootstrap(), topic, int32(o.partitions)); err != nil {
		return []string{err.Error()}
	}
	say("[%s] topic %s created with %d partitions", since(), topic, o.partitions)

	producer, err := kgo.NewClient(kgo.SeedBrokers(srv.bootstrap()))
	if err != nil {
		return []string{fmt.Sprintf("producer client: %v", err)}
	}
	defer producer.Close()
	book := newLedger()
	produceCtx, stopProducing := context.WithCancel(ctx)
	defer stopProducing()
	unresolved := make(chan int64, 1)
	// The producer goroutine is owned here: stopProducing ends its sending, the flush is
	// bounded, and we wait for its result below on every path that started it.
	flushDeadline := o.timeout / 3
	go func() { unresolved <- produceUntil(produceCtx, ctx, producer, topic, o.rate, book, flushDeadline) }()

	var problems []string
	for kill := 1; kill <= 2 && len(problems) == 0; kill++ {
		if err := awaitProgress(ctx, book, o.phase, o.resumeWait); err != nil {
			problems = append(problems, fmt.Sprintf("before kill %d: %v", kill, err))
			break
		}
		pid := srv.pid()
		if err := srv.kill9(); err != nil {
			problems = append(problems, err.Error())
			break
		}
		book.setPhase(kill)
		say("[%s] kill -9 of pid %d (%d acknowledged so far); restarting on the same data dir", since(), pid, book.snapshot().ackedCount())
		if err := srv.start(ctx); err != nil {
			problems = append(problems, fmt.Sprintf("restart %d: %v", kill, err))
			break
		}
		say("[%s] server pid %d up again", since(), srv.pid())
	}
	if len(problems) == 0 {
		if err := awaitProgress(ctx, book, o.phase, o.resumeWait); err != nil {
			problems = append(problems, fmt.Sprintf("after kill 2: %v", err))
		}
	}
	stopProducing()
	left := <-unresolved
	s := book.snapshot()
	perPhase := s.acksPerPhase(3)
	say("[%s] producer stopped: %d sent, %d acknowledged (before kill 1: %d, between kills: %d, after kill 2: %d), %d failed, %d unresolved",
		since(), s.sent, s.ackedCount(), perPhase[0], perPhase[1], perPhase[2], len(s.failed), left)
	if len(problems) > 0 {
		return problems
	}
	for i, n := range perPhase {
		if n == 0 {
			problems = append(problems, fmt.Sprintf("no record acknowledged in phase %d (0: before kill 1, 1: between kills, 2: after kill 2)", i))
		}
	}
	if left > 0 {
		problems = append(problems, fmt.Sprintf("%d records neither acknowledged nor failed %s after producing stopped", left, flushDeadline))
	}
	for seq, err := range s.failed {
		problems = append(problems, fmt.Sprintf("record %d failed (the default producer retries without limit, so a failure is a broker answer it could not retry): %v", seq, err))
		if len(problems) > 20 {
			break
		}
	}

	say("[%s] CHECK every acknowledged record reads back once, at its offset, in send order per partition", since())
	problems = append(problems, readAndVerify(ctx, srv.bootstrap(), topic, s, since)...)
	if len(problems) > 0 {
		return problems
	}

	// A clean stop and start on the data the kills left behind must keep all of it: the
	// recovery after each kill wrote checkpoints a later start trusts.
	say("[%s] CHECK the same after a clean stop (SIGTERM) and restart", since())
	if err := srv.stop(15 * time.Second); err != nil {
		return []string{err.Error()}
	}
	if err := srv.start(ctx); err != nil {
		return []string{fmt.Sprintf("restart after clean stop: %v", err)}
	}
	return readAndVerify(ctx, srv.bootstrap(), topic, s, since)
}

func readAndVerify(ctx context.Context, bootstrap, topic string, s ledgerSnapshot, since func() string) []string {
	read, err := readBack(ctx, bootstrap, topic)
	if err != nil {
		return []string{fmt.Sprintf("read back: %v", err)}
	}
	total := 0
	var counts []string
	for _, p := range sortedPartitions(read) {
		total += len(read[p])
		counts = append(counts, fmt.Sprintf("p%d=%d", p, len(read[p])))
	}
	say("[%s] read back %d records (%s)", since(), total, strings.Join(counts, " "))
	return verify(s, read)
}

// awaitProgress lets the producer run for phase and, if the server acknowledged nothing in
// that time, keeps waiting up to resumeWait more for a first acknowledgement: a kill only
// tests something while records are flowing, and a client reconnects at its own pace
// (kgo refreshes metadata at most every 5 s by default), which is not the server's fault.
func awaitProgress(ctx context.Context, book *ledger, phase, resumeWait time.Duration) error {
	startAcks := book.snapshot().ackedCount()
	began := time.Now()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(phase):
	}
	deadline := time.Now().Add(resumeWait)
	for book.snapshot().ackedCount() == startAcks {
		if time.Now().After(deadline) {
			return fmt.Errorf("no record acknowledged in %s", time.Since(began).Round(100*time.Millisecond))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	if waited := time.Since(began); waited > phase+100*time.Millisecond {
		say("first acknowledgement of this phase came %s after it began", waited.Round(100*time.Millisecond))
	}
	return nil
}

func printLogTail(path string, lines int) {
	data, err := os.ReadFile(path)
	if err != nil {
		say("no server log: %v", err)
		return
	}
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	say("---- last %d lines of %s", len(all), path)
	for _, l := range all {
		fmt.Println(l)
	}
	say("----")
}
