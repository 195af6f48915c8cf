package controller

// Directory assignment (KIP-858) as Kafka 4.4's controller does it
// (ClusterControlManager.registerBroker, ReplicationControlManager.
// handleAssignReplicasToDirs and handleDirectoriesOffline): a broker
// registers the ids of its online log dirs, tells the controller which dir
// holds each of its replicas (AssignReplicasToDirs), and names the dirs that
// failed in its heartbeats; the controller then moves the leadership of
// the replicas on those dirs and takes the broker out of their ISR, while
// the broker keeps its other dirs' partitions. Everything here is off until
// metadata.DirectoryAssignment says the cluster records directories.

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// registrationLogDirs validates a registration's log dir ids as Kafka's
// ClusterControlManager does; nil, nil when directory assignment is off.
func registrationLogDirs(im *metadata.Image, req *kmsg.BrokerRegistrationRequest) ([]kafka.UUID, error) {
	if !im.DirectoryAssignment() {
		return nil, nil
	}
	if len(req.LogDirs) == 0 {
		return nil, fmt.Errorf("%w: No directories specified in request", kerr.InvalidRegistration)
	}
	dirs := make([]kafka.UUID, 0, len(req.LogDirs))
	for _, d := range req.LogDirs {
		id := kafka.UUID(d)
		if metadata.DirReserved(id) {
			return nil, fmt.Errorf("%w: Reserved directory ID in request", kerr.InvalidRegistration)
		}
		if slices.Contains(dirs, id) {
			return nil, fmt.Errorf("%w: Duplicate directory ID in request", kerr.InvalidRegistration)
		}
		if owner, ok := dirOwner(im, id); ok && owner != req.BrokerID {
			return nil, fmt.Errorf("%w: Broker %d is already registered with directory %s", kerr.InvalidRegistration, owner, id)
		}
		dirs = append(dirs, id)
	}
	return dirs, nil
}

// dirOwner is the registered broker that has dir id among its online dirs.
func dirOwner(im *metadata.Image, id kafka.UUID) (int32, bool) {
	for _, b := range im.BrokerIDs() {
		if br, ok := im.Broker(b); ok && slices.Contains(br.LogDirs, id) {
			return b, true
		}
	}
	return 0, false
}

// HandleDirectoriesOffline is Kafka's handleDirectoriesOffline: for the dirs
// of offline that are still among the broker's online dirs, every partition
// whose replica on this broker is assigned to one of them loses the broker
// from its ISR and, when it led, gets a new leader among the other live
// in-sync replicas; a BrokerRegistrationChangeRecord keeps the broker's
// remaining dirs. Nothing when no dir is newly offline.
func HandleDirectoriesOffline(im *metadata.Image, id int32, epoch int64, offline []kafka.UUID) []metadata.Record {
	b, ok := im.Broker(id)
	if !ok || !im.DirectoryAssignment() {
		return nil
	}
	var gone, kept []kafka.UUID
	for _, d := range b.LogDirs {
		if slices.Contains(offline, d) {
			gone = append(gone, d)
		} else {
			kept = append(kept, d)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	var recs []metadata.Record
	forEachPartition(im, func(topicID kafka.UUID, p int32, st metadata.PartitionState) {
		if d, ok := st.DirOf(id); ok && slices.Contains(gone, d) {
			recs = append(recs, removeReplicaFromISR(im, topicID, p, st, id)...)
		}
	})
	if kept == nil {
		kept = []kafka.UUID{}
	}
	return append(recs, &metadata.BrokerRegistrationChangeRecord{
		BrokerID: id, BrokerEpoch: epoch, Fenced: metadata.FenceUnchanged, LogDirs: kept,
	})
}

// removeReplicaFromISR is Kafka's generateLeaderAndIsrUpdates for one
// partition and one broker: the broker leaves the ISR (unless it is its
// last member) and a partition it led elects a leader among the live
// in-sync replicas whose dir is online, else none (clean election only,
// unless the topic allows an unclean one).
func removeReplicaFromISR(im *metadata.Image, topicID kafka.UUID, p int32, st metadata.PartitionState, id int32) []metadata.Record {
	if !slices.Contains(st.ISR, id) && st.Leader != id {
		return nil
	}
	isr := slices.DeleteFunc(slices.Clone(st.ISR), func(r int32) bool { return r == id })
	if len(isr) == 0 {
		isr = st.ISR
	}
	leader := metadata.NoLeaderChange
	if st.Leader == id {
		usable := func(r int32) bool { return r != id && replicaUsable(im, st, r) }
		t, _ := im.TopicByID(topicID)
		unclean := t != nil && UncleanLeaderElectionEnabled(im, t.Name)
		leader, isr = ElectLeader(metadata.PartitionState{Replicas: st.Replicas, ISR: isr}, usable, unclean)
	}
	if leader == metadata.NoLeaderChange && len(isr) == len(st.ISR) {
		return nil
	}
	return []metadata.Record{&metadata.PartitionChangeRecord{TopicID: topicID, Partition: p, Leader: leader, ISR: isr}}
}

// replicaUsable: broker r is registered and unfenced, and its replica of st
// is not on a dir that left its online dirs (an unassigned one counts as
// online, as Kafka's).
func replicaUsable(im *metadata.Image, st metadata.PartitionState, r int32) bool {
	b, ok := im.Broker(r)
	if !ok || b.Fenced {
		return false
	}
	d, _ := st.DirOf(r)
	return !dirOffline(b, d)
}

// dirOffline: d is a real dir id the broker does not list as online.
func dirOffline(b *metadata.Broker, d kafka.UUID) bool {
	if d == metadata.DirLost {
		return true
	}
	return b.LogDirs != nil && !metadata.DirReserved(d) && !slices.Contains(b.LogDirs, d)
}

func dirIDs(ids [][16]byte) []kafka.UUID {
	out := make([]kafka.UUID, len(ids))
	for i, id := range ids {
		out[i] = kafka.UUID(id)
	}
	return out
}
