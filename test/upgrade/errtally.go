package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// errTally is a kgo.Logger that counts every error the client logs while
// it retries internally (kgo hides retriable errors from the caller), by
// kind, and copies the lines that carry one to a file. An error logged on
// several lines (the connection, then the request) counts once per line.
type errTally struct {
	mu     sync.Mutex
	counts map[errKind]int
	out    io.Writer
	name   string
}

// errKind is an error's class: a Kafka error code by name, or a connection
// failure, or anything else.
type errKind struct {
	name      string
	retriable bool
}

func newErrTally(name string, out io.Writer) *errTally {
	return &errTally{counts: make(map[errKind]int), out: out, name: name}
}

func (t *errTally) Level() kgo.LogLevel { return kgo.LogLevelDebug }

func (t *errTally) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	for i := 1; i < len(keyvals); i += 2 {
		err, ok := keyvals[i].(error)
		if !ok || err == nil {
			continue
		}
		kind := classify(err)
		t.mu.Lock()
		t.counts[kind]++
		fmt.Fprintf(t.out, "%s %s [%s] %s %v\n", time.Now().UTC().Format("15:04:05.000"), t.name, level, msg, keyvals)
		t.mu.Unlock()
	}
}

// classify names err's kind. Kafka's codes carry kerr's retriable flag;
// refused, reset or closed connections and kgo's own "broker went away"
// errors are what a rolling restart is expected to cause, and are retried.
func classify(err error) errKind {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return errKind{ke.Message, ke.Retriable}
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return errKind{"connection refused", true}
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return errKind{"connection reset", true}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return errKind{"connection closed", true}
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return errKind{"timeout", true}
	case errors.Is(err, context.Canceled), errors.Is(err, kgo.ErrClientClosed):
		return errKind{"client closing", true}
	case strings.Contains(err.Error(), "broker"):
		// kgo's internal errors of a broker that left its metadata
		// (errChosenBrokerDead, errUnknownBroker), retried on the next one.
		return errKind{"kgo: " + err.Error(), true}
	}
	return errKind{"other: " + err.Error(), false}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// kinds returns the tally sorted by count, most frequent first.
func (t *errTally) kinds() []kindCount {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]kindCount, 0, len(t.counts))
	for k, n := range t.counts {
		out = append(out, kindCount{k, n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].n != out[j].n {
			return out[i].n > out[j].n
		}
		return out[i].kind.name < out[j].kind.name
	})
	return out
}

type kindCount struct {
	kind errKind
	n    int
}

// nonRetriable lists the kinds that are not retriable.
func (t *errTally) nonRetriable() []string {
	var out []string
	for _, kc := range t.kinds() {
		if !kc.kind.retriable {
			out = append(out, fmt.Sprintf("%s x%d", kc.kind.name, kc.n))
		}
	}
	return slices.Clip(out)
}

// print writes the tally, one kind a line.
func (t *errTally) print(w io.Writer) {
	kinds := t.kinds()
	if len(kinds) == 0 {
		fmt.Fprintf(w, "  %s: no errors logged by the client\n", t.name)
		return
	}
	fmt.Fprintf(w, "  %s: errors the client logged and retried or handled:\n", t.name)
	for _, kc := range kinds {
		r := "retriable"
		if !kc.kind.retriable {
			r = "NOT retriable"
		}
		fmt.Fprintf(w, "    %6d  %s (%s)\n", kc.n, kc.kind.name, r)
	}
}

// openLog creates the file the client error lines go to.
func openLog(path string) (*os.File, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("client log: %w", err)
	}
	return f, nil
}
