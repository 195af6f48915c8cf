package metadata

import (
	"bytes"
	"slices"
	"strings"

	"github.com/sluice-io/sluice/internal/kafka"
)

// Directory ids with a meaning of their own, as Kafka's DirectoryId (KIP-858).
// Kafka reserves the ids whose high 64 bits are 0 and low bits below 100.
var (
	// DirUnassigned: the replica's dir is not known yet (a new replica
	// before its broker reported where it placed it).
	DirUnassigned = kafka.UUID{}
	// DirLost: the replica's dir failed or is gone.
	DirLost = kafka.UUID{15: 1}
	// DirMigrating: the replica's dir is being assigned after an upgrade
	// from a version without directory assignment.
	DirMigrating = kafka.UUID{15: 2}
)

// DirReserved reports whether id is one of Kafka's reserved directory ids.
func DirReserved(id kafka.UUID) bool {
	for _, b := range id[:15] {
		if b != 0 {
			return false
		}
	}
	return id[15] < 100
}

// DirectoryAssignmentMetadataVersion is Kafka's IBP_3_7_IV2, the
// metadata.version from which Kafka records replicas' directories.
const DirectoryAssignmentMetadataVersion int16 = 17

// DirectoryAssignmentFeature is Sluice's own gate of directory assignment.
// A v0.1.0 cluster already finalized metadata.version 33 but cannot read the
// records' directory fields (docs/versions.md), so metadata.version alone
// cannot gate them: they are written only once this feature is finalized at
// level 1 or more, with metadata.version at least Kafka's level for them.
const DirectoryAssignmentFeature = "sluice.directory.assignment.version"

// DirectoryAssignment reports whether the finalized features let brokers
// register their log dirs and the controller record replicas' directories.
// Invariant: while false, no record carries directory fields, so every
// record is written at a version the previous release reads.
func DirectoryAssignment(features map[string]int16) bool {
	return features[DirectoryAssignmentFeature] >= 1 &&
		features[MetadataVersionFeature] >= DirectoryAssignmentMetadataVersion
}

// DirectoryAssignment reports whether this image records directories.
func (im *Image) DirectoryAssignment() bool { return DirectoryAssignment(im.features) }

// DirOf returns the directory of broker's replica in s, DirUnassigned when
// none is recorded, and false when broker is not a replica.
func (s PartitionState) DirOf(broker int32) (kafka.UUID, bool) {
	i := slices.Index(s.Replicas, broker)
	if i < 0 {
		return DirUnassigned, false
	}
	if i < len(s.Directories) {
		return s.Directories[i], true
	}
	return DirUnassigned, true
}

// remapDirs gives each replica of newReplicas the dir it had among
// oldReplicas, DirUnassigned for a new one, as Kafka's replay of a replica
// change without directories. Nil when no dirs were recorded.
func remapDirs(oldReplicas []int32, oldDirs []kafka.UUID, newReplicas []int32) []kafka.UUID {
	if oldDirs == nil {
		return nil
	}
	out := make([]kafka.UUID, len(newReplicas))
	for i, r := range newReplicas {
		if j := slices.Index(oldReplicas, r); j >= 0 && j < len(oldDirs) {
			out[i] = oldDirs[j]
		}
	}
	return out
}

// sortedDirs copies a broker's log dir ids in order (nil stays nil).
func sortedDirs(ids []kafka.UUID) []kafka.UUID {
	if ids == nil {
		return nil
	}
	out := slices.Clone(ids)
	slices.SortFunc(out, func(a, b kafka.UUID) int { return bytes.Compare(a[:], b[:]) })
	return out
}

// dirsString prints directory ids for the goldens and logs, Kafka's reserved
// ones by name.
func dirsString(ids []kafka.UUID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		switch id {
		case DirUnassigned:
			s[i] = "UNASSIGNED"
		case DirLost:
			s[i] = "LOST"
		case DirMigrating:
			s[i] = "MIGRATING"
		default:
			s[i] = id.String()
		}
	}
	return "[" + strings.Join(s, " ") + "]"
}
