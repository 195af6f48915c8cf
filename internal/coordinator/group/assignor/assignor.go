// Package assignor holds the server-side partition assignors of KIP-848's
// consumer group protocol: "uniform" (Kafka's default) and "range". The group
// coordinator hands one Spec (members, their subscriptions and current target
// assignments, the subscribed topics) to an Assignor and gets every member's
// new target assignment back.
//
// The algorithms follow Kafka 4.4's group-coordinator module
// (UniformAssignor with its homogeneous and heterogeneous builders,
// RangeAssignor). Where Kafka's output depends on Java hash-map iteration
// order (the order of members and of topics in the homogeneous builder),
// this package uses the members' order in the Spec and topics ordered as
// Kafka's Uuid.compareTo orders them, so the result is deterministic and
// has the same balance and stickiness, without being byte-for-byte Kafka's.
// Range's output does not depend on such order and matches Kafka's.
//
// Like Kafka's, these assignors ignore racks. They are pure computation: no
// I/O, no goroutines, no state kept between calls.
package assignor

import (
	"slices"
	"strings"

	"github.com/sluice-io/sluice/internal/kafka"
)

// Topic is a subscribed topic as the metadata image knows it.
type Topic struct {
	ID         kafka.UUID
	Name       string
	Partitions int32
}

// Member is one member as the assignor sees it.
type Member struct {
	ID         string
	InstanceID string // "" for a dynamic member
	RackID     string // "" when unknown
	// Subscribed is the ids of the topics the member subscribes to (names and
	// regex already resolved), sorted; ids not in Spec.Topics are ignored.
	Subscribed []kafka.UUID
	// Current is the member's target assignment before this computation
	// (stickiness); may be nil.
	Current Assignment
}

// Spec is one computation's input. Members are sorted by ID.
type Spec struct {
	Members []Member
	Topics  map[kafka.UUID]Topic
}

// Assignment maps topic id to sorted partition numbers; topics with no
// partitions are absent.
type Assignment map[kafka.UUID][]int32

// Assignor computes target assignments.
type Assignor interface {
	Name() string
	// Assign returns every member's new target assignment (an entry for each
	// member, possibly empty). It must be deterministic for a given Spec.
	//
	// The result is read-only: a member whose assignment did not change gets
	// its Current map back (as Kafka's assignors return the same immutable
	// object), and the partition slices of the others share one array.
	Assign(spec Spec) (map[string]Assignment, error)
}

// Kafka's names of the assignors (group.consumer.assignors and the
// ServerAssignor field of ConsumerGroupHeartbeat).
const (
	UniformName = "uniform"
	RangeName   = "range"
)

// Uniform is Kafka's default server assignor: balanced and sticky.
func Uniform() Assignor { return uniform{} }

// Range is Kafka's range server assignor: contiguous ranges of each topic's
// partitions to its subscribers in member order, so that a member gets the
// same partition numbers of co-partitioned topics.
func Range() Assignor { return rangeAssignor{} }

// ByName returns the assignor Kafka knows by name.
func ByName(name string) (Assignor, bool) {
	switch name {
	case UniformName:
		return Uniform(), true
	case RangeName:
		return Range(), true
	}
	return nil, false
}

// Names lists the assignors, the default first (Kafka's order of
// group.consumer.assignors).
func Names() []string { return []string{UniformName, RangeName} }

// sortedMembers returns the members in ID order (the Spec promises it; a
// caller that breaks the promise still gets a deterministic result) and
// refuses duplicate ids, which the result could not represent.
func sortedMembers(members []Member) ([]Member, error) {
	byID := func(a, b Member) int { return strings.Compare(a.ID, b.ID) }
	if !slices.IsSortedFunc(members, byID) {
		members = slices.Clone(members)
		slices.SortStableFunc(members, byID)
	}
	for i := 1; i < len(members); i++ {
		if members[i].ID == members[i-1].ID {
			return nil, &SpecError{Reason: "duplicate member id " + members[i].ID}
		}
	}
	return members, nil
}

// SpecError reports a Spec the assignors cannot work with.
type SpecError struct{ Reason string }

func (e *SpecError) Error() string { return "assignor: invalid spec: " + e.Reason }
