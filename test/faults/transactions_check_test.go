package faults

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// appOutcomes are the transaction attempts whose end the application saw,
// with their record counts, read from the "txn ..." lines of every
// instance (see test/faults/txnapp).
type appOutcomes struct {
	commit, abort, unknown map[string]int
	// killedInside are the attempts killed while held open (before End):
	// they can only have been aborted.
	killedInside map[string]int
	resets       int
}

func (o appOutcomes) commits() int { return len(o.commit) }

func (a *txnApp) outcomes() appOutcomes {
	o := appOutcomes{commit: map[string]int{}, abort: map[string]int{}, unknown: map[string]int{}, killedInside: map[string]int{}}
	for _, p := range a.procs {
		exited, _ := p.Exited()
		o.add(p.Logs(), exited)
	}
	return o
}

// add reads one instance's log; an attempt it held open and never ended
// was killed inside once the process has exited.
func (o *appOutcomes) add(logs string, exited bool) {
	held, ending := map[string]int{}, map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || f[0] != "txn" {
			continue
		}
		if f[1] == "reset" {
			o.resets++
			continue
		}
		if len(f) < 4 {
			continue
		}
		n, _ := strconv.Atoi(f[3])
		switch f[1] {
		case "commit":
			o.commit[f[2]] = n
		case "abort":
			o.abort[f[2]] = n
		case "unknown":
			o.unknown[f[2]] = n
		case "holding":
			held[f[2]] = n
		case "ending":
			ending[f[2]] = true
		}
	}
	for attempt, n := range held {
		if exited && !ending[attempt] {
			o.killedInside[attempt] = n
		}
	}
}

// hangingTransactions waits, after the application stopped, until the
// coordinator lists no transaction Ongoing or preparing and no partition
// the pipeline wrote transactionally (the output and __consumer_offsets)
// holds an open transaction; it returns how many are still there once the
// transaction timeout and a margin for the coordinator's abort have passed.
func hangingTransactions(t *testing.T, adm *kadm.Client) int {
	parts := kadm.TopicsSet{}
	for p := range int32(txnPartitions) {
		parts.Add(txnOutput, p)
	}
	for p := range int32(txnOffsetsPartitions) {
		parts.Add("__consumer_offsets", p)
	}
	open := func() (int, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		listed, err := adm.ListTransactions(ctx, nil, []string{"Ongoing", "PrepareCommit", "PrepareAbort", "PrepareEpochFence"})
		if err != nil {
			return 0, fmt.Errorf("list transactions: %w", err)
		}
		n := len(listed)
		producers, err := adm.DescribeProducers(ctx, parts)
		if err != nil {
			return 0, fmt.Errorf("describe producers: %w", err)
		}
		producers.EachProducer(func(p kadm.DescribedProducer) {
			if p.CurrentTxnStartOffset >= 0 {
				n++
			}
		})
		return n, nil
	}
	var left int
	deadline := time.Now().Add(txnTimeout + 10*time.Second)
	// A poll, not testutil.Eventually: what is left at the deadline is
	// counted and judged by the caller.
	for {
		n, err := open()
		if err == nil {
			left = n
			if n == 0 || time.Now().After(deadline) {
				return left
			}
		} else if time.Now().After(deadline) {
			t.Fatalf("hanging transactions: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// writeSentinels appends a non-transactional sentinel to every output
// partition: a read_committed reader reaches it only past every
// transaction before it, so the read-back knows where each partition ends.
func writeSentinels(t *testing.T, addrs []string) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.DefaultProduceTopic(txnOutput),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for p := range int32(txnPartitions) {
		recs = append(recs, &kgo.Record{Partition: p, Value: []byte(txnSentinel)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("sentinels: %v", err)
	}
}

// readOutput reads every output partition from its start to its sentinel
// at the given isolation level and returns the values before it.
func readOutput(t *testing.T, addrs []string, level kgo.IsolationLevel) map[int32][]string {
	parts := make(map[int32]kgo.Offset)
	for p := range int32(txnPartitions) {
		parts[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.FetchIsolationLevel(level),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{txnOutput: parts}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	out := make(map[int32][]string)
	ended := make(map[int32]bool)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for len(ended) < txnPartitions {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %s: %v (ended partitions %v): a transaction holds the last stable offset back?", txnOutput, ctx.Err(), ended)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if string(r.Value) == txnSentinel {
				ended[r.Partition] = true
				return
			}
			if !ended[r.Partition] {
				out[r.Partition] = append(out[r.Partition], string(r.Value))
			}
		})
	}
	return out
}

// txnVerdict counts what the read-back shows.
type txnVerdict struct {
	// committed and aborted are the attempts visible to read_committed
	// and those in the log but not visible.
	committed, aborted int
	// lost and duplicated count input values with no output or more
	// than one; unexpected counts outputs of no input value.
	lost, duplicated, unexpected int
	// abortedVisible counts visible records of attempts the application
	// saw abort, plus those of attempts only partly visible (torn).
	abortedVisible, torn int
	// commitNotVisible counts attempts the application saw commit whose
	// records are not all visible.
	commitNotVisible int
}

// judgeTransactions compares the read_committed and read_uncommitted
// read-backs with the inputs and the application's outcomes.
func judgeTransactions(inputs int, committed, all map[int32][]string, seen appOutcomes) txnVerdict {
	var v txnVerdict
	outputs := make(map[string]int) // input value -> visible outputs
	visible := make(map[string]int) // attempt -> visible records
	written := make(map[string]int) // attempt -> records in the log
	for _, values := range committed {
		for _, value := range values {
			in, attempt, _ := strings.Cut(value, "|")
			outputs[in]++
			visible[attempt]++
		}
	}
	for _, values := range all {
		for _, value := range values {
			_, attempt, _ := strings.Cut(value, "|")
			written[attempt]++
		}
	}
	for i := range inputs {
		switch n := outputs[inputValue(i)]; {
		case n == 0:
			v.lost++
		case n > 1:
			v.duplicated += n - 1
		}
		delete(outputs, inputValue(i))
	}
	for _, n := range outputs {
		v.unexpected += n
	}
	for attempt, n := range written {
		switch shown := visible[attempt]; {
		case shown == 0:
			v.aborted++
		case seen.abort[attempt] > 0 || seen.killedInside[attempt] > 0:
			v.committed++
			v.abortedVisible += shown
		case shown < n:
			v.committed++
			v.torn++
			v.abortedVisible += shown
		default:
			v.committed++
		}
	}
	for attempt, n := range seen.commit {
		if visible[attempt] != n {
			v.commitNotVisible++
		}
	}
	return v
}
