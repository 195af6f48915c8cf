// Command txnerrors runs fixed sequences of transaction requests that a broker must refuse
// (or accept) with Kafka's error codes, and prints one normalised line per step: the
// sequence, the request and its pinned version, what it was about, and the error code's
// name (producer ids as P1, P2... in order of appearance, epochs as numbers, no times).
// test/interop/txn_errors_test.sh runs it against `sluice server` and against the pinned
// Kafka and requires the two transcripts to be equal (issue 15's differential checks).
//
// Every request is raw kmsg at an explicit version, sent to the transaction coordinator,
// the group coordinator or the partition leader it belongs to; each sequence uses its own
// transactional ids, and waits for completed states (CompleteCommit, CompleteAbort) where
// the next step depends on them, so the transcript is deterministic on a fresh broker.
//
//	go run ./test/interop/txnerrors --bootstrap HOST:PORT
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func main() {
	bootstrap := flag.String("bootstrap", "", "broker host:port")
	only := flag.String("only", "", "run only the sequences whose name contains this")
	timeout := flag.Duration("timeout", 80*time.Second, "bound on the whole run")
	flag.Parse()
	if *bootstrap == "" {
		flag.Usage()
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := run(ctx, *bootstrap, *only, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "txnerrors:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, bootstrap, only string, out io.Writer) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	defer cl.Close()
	r := &runner{ctx: ctx, cl: cl, out: out, pids: map[int64]string{}, ready: map[coordKey]int32{}}
	if err := r.setup(); err != nil {
		return err
	}
	for _, s := range sequences() {
		if only != "" && !strings.Contains(s.name, only) {
			continue
		}
		r.seq = s.name
		s.run(r)
		if r.err != nil {
			return fmt.Errorf("%s: %w", s.name, r.err)
		}
	}
	return nil
}

// Topics the sequences use: one of two partitions, and one that never exists.
const (
	topic        = "txnerr"
	missingTopic = "txnerr-missing"
)

type runner struct {
	ctx     context.Context
	cl      *kgo.Client
	out     io.Writer
	seq     string           // the sequence running, the first word of each line
	pids    map[int64]string // producer ids named in order of appearance
	topicID [16]byte
	leaders map[int32]int32    // partition of topic -> leader
	ready   map[coordKey]int32 // coordinators found and loaded, by key
	err     error              // the first failure; every step after it does nothing
}

// fail records the first error and reports whether there is one.
func (r *runner) fail(err error) bool {
	if err != nil && r.err == nil {
		r.err = err
	}
	return r.err != nil
}

// pinned sends a request at exactly one version: kgo sets the version to the smaller of
// MaxVersion and the broker's, so MaxVersion is what pins it (checked after the call).
type pinned struct {
	kmsg.Request
	v int16
}

func (p pinned) MaxVersion() int16 { return p.v }

// request sends req at version v to broker node and fails if the broker lowered it.
func (r *runner) request(node int32, v int16, req kmsg.Request) (kmsg.Response, error) {
	resp, err := r.cl.Broker(int(node)).Request(r.ctx, pinned{req, v})
	if err != nil {
		return nil, fmt.Errorf("%s v%d: %w", kmsg.NameForKey(req.Key()), v, err)
	}
	if got := req.GetVersion(); got != v {
		return nil, fmt.Errorf("%s: broker took v%d, not v%d", kmsg.NameForKey(req.Key()), got, v)
	}
	return resp, nil
}

// line prints one step: the sequence, the request at its version, what, and the code.
func (r *runner) line(key int16, v int16, what string, code int16) {
	parts := []string{r.seq, kmsg.NameForKey(key), fmt.Sprintf("v%d", v)}
	if what != "" {
		parts = append(parts, what)
	}
	parts = append(parts, codeName(code))
	fmt.Fprintln(r.out, strings.Join(parts, " "))
}

// note prints a line that is not a request's code (a state, an epoch).
func (r *runner) note(format string, args ...any) {
	fmt.Fprintf(r.out, "%s %s\n", r.seq, fmt.Sprintf(format, args...))
}

func codeName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	if err, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		return err.Message
	}
	return fmt.Sprintf("UNKNOWN_CODE_%d", code)
}

// pidName names a producer id by its order of appearance, as ids differ between brokers.
func (r *runner) pidName(pid int64) string {
	if pid < 0 {
		return fmt.Sprint(pid)
	}
	if n, ok := r.pids[pid]; ok {
		return n
	}
	n := fmt.Sprintf("P%d", len(r.pids)+1)
	r.pids[pid] = n
	return n
}

// retry calls f until it reports done or the run's deadline passes; f's error ends it.
func (r *runner) retry(what string, f func() (bool, error)) error {
	for {
		done, err := f()
		if err != nil || done {
			return err
		}
		select {
		case <-r.ctx.Done():
			return fmt.Errorf("%s: %w", what, r.ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// retriable reports codes a setup step waits out (loading, creating, moving coordinators).
func retriable(code int16) bool {
	switch kerr.ErrorForCode(code) {
	case kerr.CoordinatorLoadInProgress, kerr.CoordinatorNotAvailable, kerr.NotCoordinator,
		kerr.ConcurrentTransactions, kerr.UnknownTopicOrPartition, kerr.LeaderNotAvailable,
		kerr.NotLeaderForPartition:
		return true
	}
	return false
}
