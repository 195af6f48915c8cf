// Package checker reads a `sluice verify` history and finds the anomalies
// Jepsen's Kafka analyses name: lost writes, duplicates, reordering,
// inconsistent offsets, poll skips and non-monotonic polls, aborted reads
// and torn transactions, committed offsets going back. It is pure: a
// function of the history.
package checker

import "github.com/sluice-io/sluice/internal/verify/history"

// The anomaly kinds, named as Jepsen's Kafka workload names them where it
// has a name.
const (
	// LostWrite: a value was acknowledged but no reader saw it, though
	// readers read past its offset.
	LostWrite = "lost-write"
	// Duplicate: one value at two or more offsets.
	Duplicate = "duplicate"
	// InconsistentOffsets: one offset of a partition read with two
	// different values.
	InconsistentOffsets = "inconsistent-offsets"
	// NonmonotonicSend: a producer's values acknowledged in one order sit
	// in the partition in another (reordering within a partition).
	NonmonotonicSend = "nonmonotonic-send"
	// PollSkip: a consumer's consecutive polls of a partition it stayed
	// assigned jumped over offsets holding values.
	PollSkip = "poll-skip"
	// NonmonotonicPoll: a consumer's consecutive polls of a partition it
	// stayed assigned went back (or repeated an offset).
	NonmonotonicPoll = "nonmonotonic-poll"
	// AbortedRead: a read-committed reader saw a value of an aborted
	// transaction (Jepsen's G1a).
	AbortedRead = "aborted-read"
	// TornTransaction: a reader saw some but not all of a committed
	// transaction's values in a partition range it read past.
	TornTransaction = "torn-transaction"
	// CommittedOffsetRegression: a group's acknowledged committed offset
	// for a partition went back without a reset.
	CommittedOffsetRegression = "committed-offset-regression"
	// Unseen is not an anomaly: acknowledged values no reader saw and no
	// reader read past (reported as a count, as Jepsen's :unseen).
)

// Anomaly is one finding, with what shows it.
type Anomaly struct {
	Kind      string `json:"kind"`
	Topic     string `json:"topic,omitempty"`
	Partition int32  `json:"partition"`
	// Offsets and Values are the offsets and values involved.
	Offsets []int64  `json:"offsets,omitempty"`
	Values  []string `json:"values,omitempty"`
	// Ops are the history's ops that show it (sends, acks, polls), with
	// their times.
	Ops []history.Op `json:"ops,omitempty"`
	// Explain says in a sentence what is wrong.
	Explain string `json:"explain"`
}

// Stats counts what the history holds.
type Stats struct {
	Sends, Acks, Fails, Infos int64
	Polls                     int64 // records polled (not counting final reads)
	FinalReads                int64 // records read by final readers
	Commits                   int64
	TxnCommits, TxnAborts     int64
	Faults                    int64
	FaultsByKind              map[string]int64
	Unseen                    int64 // acked values no reader saw nor read past
}

// Result is a checked history.
type Result struct {
	Anomalies []Anomaly
	Stats     Stats
	// Omitted counts, per kind, the anomalies found beyond the first
	// thousand of that kind, which Anomalies does not list.
	Omitted map[string]int64 `json:",omitempty"`
}

// Valid reports whether no anomaly was found.
func (r Result) Valid() bool { return len(r.Anomalies) == 0 }

// ByKind counts the anomalies of each kind.
func (r Result) ByKind() map[string]int {
	m := map[string]int{}
	for _, a := range r.Anomalies {
		m[a.Kind]++
	}
	for k, n := range r.Omitted {
		m[k] += int(n)
	}
	return m
}
