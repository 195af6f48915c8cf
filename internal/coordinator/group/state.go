package group

// State is a classic group's state, with Kafka's names.
type State int8

const (
	// Empty: no members; offsets may remain.
	Empty State = iota
	// PreparingRebalance: waiting for members to (re)join.
	PreparingRebalance
	// CompletingRebalance: joined; waiting for the leader's assignment.
	CompletingRebalance
	// Stable: assignment handed out; members heartbeat.
	Stable
	// Dead: removed; the group id is free again.
	Dead
)

// String returns Kafka's name of the state, as DescribeGroups and
// ListGroups report it.
func (s State) String() string {
	switch s {
	case Empty:
		return "Empty"
	case PreparingRebalance:
		return "PreparingRebalance"
	case CompletingRebalance:
		return "CompletingRebalance"
	case Stable:
		return "Stable"
	case Dead:
		return "Dead"
	default:
		return "Unknown"
	}
}
