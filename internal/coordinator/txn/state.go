package txn

// State is a transaction's state, with Kafka's names and the ids its
// transaction log records carry.
type State int8

const (
	// Empty: a producer id and epoch, no transaction.
	Empty State = 0
	// Ongoing: partitions were added; data may be written to them.
	Ongoing State = 1
	// PrepareCommit: the commit is decided; markers are being written.
	PrepareCommit State = 2
	// PrepareAbort: the abort is decided; markers are being written.
	PrepareAbort State = 3
	// CompleteCommit: every partition has its commit marker.
	CompleteCommit State = 4
	// CompleteAbort: every partition has its abort marker.
	CompleteAbort State = 5
	// Dead: the id is being expired (only ever a pending state).
	Dead State = 6
	// PrepareEpochFence: the epoch is being bumped to fence the producer
	// before an abort (only ever a pending state).
	PrepareEpochFence State = 7
)

var stateNames = [...]string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence"}

// String returns Kafka's name of the state, as DescribeTransactions and
// ListTransactions report it.
func (s State) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return "Unknown"
	}
	return stateNames[s]
}

// ParseState returns the state Kafka names name (ListTransactions' state
// filters); false for an unknown name, which ListTransactions reports back.
func ParseState(name string) (State, bool) {
	for i, n := range stateNames {
		if n == name {
			return State(i), true
		}
	}
	return 0, false
}

// validPrevious lists, per state, the states it may be entered from
// (Kafka's validPreviousStates). An abort may start from Empty or a
// completed transaction under Transactions V2: the client cannot always
// know whether a transaction is open and aborts when unsure.
var validPrevious = map[State][]State{
	Empty:             {Empty, CompleteCommit, CompleteAbort},
	Ongoing:           {Ongoing, Empty, CompleteCommit, CompleteAbort},
	PrepareCommit:     {Ongoing},
	PrepareAbort:      {Ongoing, PrepareEpochFence, Empty, CompleteCommit, CompleteAbort},
	CompleteCommit:    {PrepareCommit},
	CompleteAbort:     {PrepareAbort},
	Dead:              {Empty, CompleteAbort, CompleteCommit},
	PrepareEpochFence: {Ongoing},
}

// canEnter reports whether a transaction in from may move to to.
func canEnter(to, from State) bool {
	for _, s := range validPrevious[to] {
		if s == from {
			return true
		}
	}
	return false
}

// expirationAllowed reports whether an id idle in s may expire.
func (s State) expirationAllowed() bool {
	return s == Empty || s == CompleteCommit || s == CompleteAbort
}

// TransactionVersion is a level of the transaction.version feature, the
// server's finalized one or the one a client speaks.
type TransactionVersion int16

const (
	// TV0 is the original protocol.
	TV0 TransactionVersion = 0
	// TV1 writes flexible (version 1) transaction log values (KIP-890).
	TV1 TransactionVersion = 1
	// TV2 bumps the producer epoch at every EndTxn and adds partitions
	// implicitly from Produce (KIP-890 part 2).
	TV2 TransactionVersion = 2
)

// SupportsEpochBump reports whether EndTxn bumps the epoch (TV2+).
func (v TransactionVersion) SupportsEpochBump() bool { return v >= TV2 }

// logValueVersion is the transaction log value version written at server
// level v: 1 (flexible, with the tagged fields) from TV1, else 0.
func (v TransactionVersion) logValueVersion() int16 {
	if v >= TV1 {
		return 1
	}
	return 0
}

// maxEpoch is Short.MaxValue; a producer epoch at maxEpoch-1 or above is
// exhausted (the coordinator keeps the last one to fence with).
const maxEpoch int16 = 1<<15 - 1

func epochExhausted(epoch int16) bool { return epoch >= maxEpoch-1 }
