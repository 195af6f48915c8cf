package group

import (
	"github.com/sluice-io/sluice/internal/coordinator/group/assignor"
	"github.com/sluice-io/sluice/internal/kafka"
)

// reconciler moves a member's current assignment toward its target, Kafka's
// CurrentAssignmentBuilder: partitions leave the member (revocation) before
// they are given to anyone else, and a partition is given to a member only
// once its previous owner has released it.
type reconciler struct {
	cg          *consumerGroup
	topics      Topics
	targetEpoch int32
	target      assignor.Assignment
	// subscriptionChanged: the member's subscription changed in this
	// heartbeat, so partitions of topics it left are revoked at once.
	subscriptionChanged bool
	// owned is what the member says it owns; nil when it did not say.
	owned []TopicPartitions
}

// errFencedUnknownState is returned for a member in a state this
// coordinator does not know that still claims partitions.
type fencedError struct{ msg string }

func (e fencedError) Error() string { return e.msg }

// reconcile returns the member's next state (m itself when nothing
// changes; a copy otherwise).
func (r *reconciler) reconcile(m *consumerMember) (*consumerMember, error) {
	switch m.state {
	case memberStable:
		if m.epoch != r.targetEpoch {
			return r.computeNext(m, m.epoch), nil
		}
		if r.subscriptionChanged {
			return r.updateCurrent(m), nil
		}
		return m, nil
	case memberUnrevokedPartitions:
		if r.ownsAny(m.pendingRevocation) {
			if r.subscriptionChanged {
				return r.updateCurrent(m), nil
			}
			return m, nil
		}
		return r.computeNext(m, m.epoch), nil
	case memberUnreleasedPartitions:
		return r.computeNext(m, m.epoch), nil
	default:
		if r.owned == nil || len(r.owned) > 0 {
			return nil, fencedError{"The consumer group member is in a unknown state. The member must abandon all its partitions and rejoin."}
		}
		return r.computeNext(m, r.targetEpoch), nil
	}
}

// ownsAny reports whether the member still owns one of p; a member that did
// not say what it owns is taken to own everything.
func (r *reconciler) ownsAny(p partitionEpochs) bool {
	if r.owned == nil {
		return true
	}
	for _, tp := range r.owned {
		for _, part := range tp.Partitions {
			if p.has(tp.TopicID, part) {
				return true
			}
		}
	}
	return false
}

// updateCurrent revokes at once the partitions of topics the member no
// longer subscribes to, keeping its epoch.
func (r *reconciler) updateCurrent(m *consumerMember) *consumerMember {
	subs := r.cg.subscribedTopicIDs(m, r.topics)
	next := m.clone()
	changed := false
	if len(subs) == 0 && len(m.pendingRevocation) == 0 {
		changed = len(m.assigned) > 0
		next.pendingRevocation = m.assigned.clone()
		next.assigned = partitionEpochs{}
	} else {
		for id, parts := range m.assigned {
			if subs[id] {
				continue
			}
			changed = true
			delete(next.assigned, id)
			pr := next.pendingRevocation[id]
			if pr == nil {
				pr = make(map[int32]int32)
				next.pendingRevocation[id] = pr
			}
			for p, e := range parts {
				pr[p] = e
			}
		}
	}
	if !changed {
		return m
	}
	if len(next.pendingRevocation) > 0 && r.ownsAny(next.pendingRevocation) {
		next.state = memberUnrevokedPartitions
		return next
	}
	next.pendingRevocation = partitionEpochs{}
	return next
}

// computeNext is one step toward the target: keep what stays, revoke what
// goes, and add what is free once nothing remains to revoke.
func (r *reconciler) computeNext(m *consumerMember, memberEpoch int32) *consumerMember {
	subs := r.cg.subscribedTopicIDs(m, r.topics)
	assigned, revoking, adding := partitionEpochs{}, partitionEpochs{}, map[kafka.UUID][]int32{}
	unreleased := false
	ids := make(map[kafka.UUID]bool)
	for id := range r.target {
		ids[id] = true
	}
	for id := range m.assigned {
		ids[id] = true
	}
	for id := range ids {
		target := make(map[int32]bool)
		if subs[id] {
			for _, p := range r.target[id] {
				target[p] = true
			}
		}
		for p, e := range m.assigned[id] {
			if target[p] {
				putEpoch(assigned, id, p, e)
			} else {
				putEpoch(revoking, id, p, e)
			}
		}
		for p := range target {
			if assigned.has(id, p) {
				continue
			}
			// Still held by another member (not by this one, pending its
			// own revocation): wait for it to be released.
			if r.cg.ownerEpoch(id, p) != -1 && !m.pendingRevocation.has(id, p) {
				unreleased = true
				continue
			}
			adding[id] = append(adding[id], p)
		}
	}
	next := m.clone()
	if len(revoking) > 0 && r.ownsAny(revoking) {
		next.state = memberUnrevokedPartitions
		next.updateEpoch(memberEpoch)
		next.assigned, next.pendingRevocation = assigned, revoking
		return next
	}
	for id, parts := range adding {
		for _, p := range parts {
			putEpoch(assigned, id, p, r.targetEpoch)
		}
	}
	next.state = memberStable
	if unreleased {
		next.state = memberUnreleasedPartitions
	}
	next.updateEpoch(r.targetEpoch)
	next.assigned, next.pendingRevocation = assigned, partitionEpochs{}
	return next
}

func putEpoch(p partitionEpochs, id kafka.UUID, partition, epoch int32) {
	parts := p[id]
	if parts == nil {
		parts = make(map[int32]int32)
		p[id] = parts
	}
	parts[partition] = epoch
}
