package commitlog

// The copy of a partition into its future log (AlterReplicaLogDirs) is
// driven by a pure step function, as Kafka's ReplicaAlterLogDirsThread
// treats the current log like a leader: each step looks at both logs and
// says what to do next. It is fed views taken by the caller and decides
// nothing by itself, so its cases are a datadriven test
// (testdata/moveplan).

// CopyView is what one copy step looks at.
type CopyView struct {
	CurStart, CurEnd int64 // the current log's start and end offsets
	FutStart, FutEnd int64 // the future log's
	// FutEpochEnd is where the current log's epoch at or below the future
	// log's latest epoch ends (its OffsetForLeaderEpoch answer), -1 when the
	// future log has no epoch yet: a future log that went past it
	// diverged (the current log was truncated and written anew).
	FutEpochEnd int64
}

// CopyAction is the next step of a copy.
type CopyAction int

// The steps, in the order planCopy checks them.
const (
	// CopyStartAt empties the future log and starts it at Offset: the
	// current log's start moved past everything it holds (Kafka's
	// out-of-range handling: truncateFullyAndStartAt).
	CopyStartAt CopyAction = iota
	// CopyTruncate truncates the future log to Offset (divergence, or the
	// current log was truncated below it).
	CopyTruncate
	// CopyAdvanceStart raises the future log's start offset to Offset
	// (retention or DeleteRecords on the current log).
	CopyAdvanceStart
	// CopyRecords copies the batches from Offset of the current log.
	CopyRecords
	// CopySwap: the future log has caught up; it replaces the current one
	// if the end offsets are still equal under the current log's lock.
	CopySwap
)

func (a CopyAction) String() string {
	return [...]string{"start-at", "truncate", "advance-start", "copy", "swap"}[a]
}

// PlanCopy returns the next step of a copy and its offset.
func PlanCopy(v CopyView) (CopyAction, int64) {
	switch {
	case v.FutEnd < v.CurStart || v.FutStart > v.CurEnd:
		return CopyStartAt, v.CurStart
	case v.FutEpochEnd >= 0 && v.FutEpochEnd < v.FutEnd:
		return CopyTruncate, v.FutEpochEnd
	case v.FutEnd > v.CurEnd:
		return CopyTruncate, v.CurEnd
	case v.FutStart < v.CurStart:
		return CopyAdvanceStart, v.CurStart
	case v.FutEnd == v.CurEnd:
		return CopySwap, v.FutEnd
	}
	return CopyRecords, v.FutEnd
}
