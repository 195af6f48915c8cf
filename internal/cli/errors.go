package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// kafkaError is a Kafka error code returned by the server, printed as its
// name and meaning ("TOPIC_ALREADY_EXISTS: Topic with this name already
// exists."), with the server's own message when it sent one.
type kafkaError struct {
	err    *kerr.Error
	detail string
}

func (e *kafkaError) Error() string {
	d := strings.TrimSpace(e.detail)
	if d != "" && specificDescription(e.err) {
		// The canned text names one cause; the server's names the real one.
		return e.err.Message + ": " + d
	}
	s := e.err.Message + ": " + e.err.Description
	if d != "" && d != e.err.Description {
		s += " (server: " + d + ")"
	}
	return s
}

// specificDescription reports whether Kafka's canned description of the
// code claims one particular cause ("Number of partitions is below 1."
// for INVALID_PARTITIONS, whatever was wrong with the partitions), so
// that beside the server's own message it would mislead.
func specificDescription(err *kerr.Error) bool {
	switch err {
	case kerr.InvalidPartitions, kerr.InvalidReplicationFactor:
		return true
	}
	return false
}

func (e *kafkaError) Unwrap() error { return e.err }

// describe turns a client error into a one-line error: Kafka error codes get
// their name and meaning, deadlines say so, and newlines are folded.
func describe(err error) error {
	if err == nil {
		return nil
	}
	if se, ok := errors.AsType[*kadm.ShardErrors](err); ok && len(se.Errs) > 0 {
		return shardErrors(se)
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		var already *kafkaError
		if errors.As(err, &already) {
			return oneLine(err)
		}
		return oneLine(&kafkaError{err: ke})
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return oneLine(fmt.Errorf("timed out (--timeout): %w", err))
	}
	return oneLine(err)
}

// serverError wraps a per-resource error code with the server's message.
func serverError(err error, message string) error {
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return describe(err)
	}
	return &kafkaError{err: ke, detail: message}
}

// lineError is an error whose text has no newlines.
type lineError struct{ err error }

func (e lineError) Error() string {
	return strings.Join(strings.Fields(strings.ReplaceAll(e.err.Error(), "\n", " ")), " ")
}

func (e lineError) Unwrap() error { return e.err }

func oneLine(err error) error {
	if !strings.Contains(err.Error(), "\n") {
		return err
	}
	return lineError{err}
}

// errorName is the short name of an error for a table cell: the Kafka error
// name when it is one.
func errorName(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message
	}
	return "error"
}

// shardErrors says which broker failed and why, instead of kadm's "request
// X has N separate shard errors, first: ...".
func shardErrors(se *kadm.ShardErrors) error {
	parts := make([]string, 0, len(se.Errs))
	for _, e := range se.Errs {
		msg := describe(e.Err).Error()
		if e.Broker.NodeID >= 0 {
			msg = fmt.Sprintf("broker %d: %s", e.Broker.NodeID, msg)
		}
		if !slices.Contains(parts, msg) {
			parts = append(parts, msg)
		}
	}
	return errors.New(strings.Join(parts, "; "))
}
