package metadata

import (
	"fmt"
	"maps"
	"slices"
)

// SnapshotRecords are the records that rebuild an image from nothing: the
// cluster id, features, brokers, topics with their partitions (epochs as
// they stand), configs, the producer-id high mark, SCRAM credentials, ACLs
// and client quotas, each in a fixed order, so equal images give equal
// snapshots.
func SnapshotRecords(im *Image) []Record {
	var out []Record
	if im.clusterID != "" {
		out = append(out, &ClusterIDRecord{ClusterID: im.clusterID})
	}
	for _, name := range slices.Sorted(maps.Keys(im.features)) {
		out = append(out, &FeatureLevelRecord{Name: name, Level: im.features[name]})
	}
	for _, id := range im.BrokerIDs() {
		b := im.brokers[id]
		out = append(out, &RegisterBrokerRecord{
			BrokerID: b.ID, IncarnationID: b.IncarnationID, BrokerEpoch: b.Epoch,
			Endpoints: slices.Clone(b.Endpoints), Rack: cloneString(b.Rack), Fenced: b.Fenced,
			LogDirs: slices.Clone(b.LogDirs),
		})
	}
	for _, name := range im.TopicNames() {
		t := im.topicsByName[name]
		out = append(out, &TopicRecord{Name: t.Name, TopicID: t.ID})
		for _, p := range t.PartitionIDs() {
			ps := t.Partitions[p]
			out = append(out, &PartitionRecord{
				TopicID: t.ID, Partition: p, Replicas: slices.Clone(ps.Replicas), ISR: slices.Clone(ps.ISR),
				Leader: ps.Leader, LeaderEpoch: ps.LeaderEpoch, PartitionEpoch: ps.PartitionEpoch,
				RemovingReplicas: slices.Clone(ps.RemovingReplicas), AddingReplicas: slices.Clone(ps.AddingReplicas),
				Directories: slices.Clone(ps.Directories),
			})
		}
	}
	for _, res := range slices.SortedFunc(maps.Keys(im.configs), compareResources) {
		cfg := im.configs[res]
		for _, k := range slices.Sorted(maps.Keys(cfg)) {
			v := cfg[k]
			out = append(out, &ConfigRecord{ResourceType: res.Type, ResourceName: res.Name, Name: k, Value: &v})
		}
	}
	if im.nextProducerID > 0 {
		out = append(out, &ProducerIDsRecord{BrokerID: -1, BrokerEpoch: -1, NextProducerID: im.nextProducerID})
	}
	return append(out, securitySnapshotRecords(im)...)
}

// securitySnapshotRecords are the SCRAM credentials (by user, then
// mechanism), the ACL bindings (sorted) and the client quotas (by entity,
// then key).
func securitySnapshotRecords(im *Image) []Record {
	var out []Record
	for _, user := range im.ScramUsers() {
		creds := im.sec.scram[user]
		for _, m := range slices.Sorted(maps.Keys(creds)) {
			c := creds[m]
			out = append(out, &UserScramCredentialRecord{Name: user, Mechanism: m, Salt: slices.Clone(c.Salt),
				StoredKey: slices.Clone(c.StoredKey), ServerKey: slices.Clone(c.ServerKey), Iterations: c.Iterations})
		}
	}
	for _, b := range im.ACLs(AllACLs()) {
		out = append(out, &AccessControlEntryRecord{Binding: b})
	}
	for _, e := range im.QuotaEntities() {
		q := im.sec.quotas[e]
		for _, k := range slices.Sorted(maps.Keys(q)) {
			out = append(out, &ClientQuotaRecord{Entity: e, Key: k, Value: q[k]})
		}
	}
	return out
}

// EncodeSnapshot encodes an image as the data of a metadata snapshot: its
// SnapshotRecords in the EncodeRecords layout (docs/metadata-records.md).
// The snapshot's offset and epoch travel beside it (the checkpoint name).
func EncodeSnapshot(im *Image) []byte { return EncodeRecords(SnapshotRecords(im)) }

// DecodeSnapshot rebuilds the image a snapshot holds, as of the log offset
// and epoch of the last record it covers.
func DecodeSnapshot(offset int64, epoch int32, data []byte) (*Image, error) {
	d, _, err := snapshotDelta(offset, epoch, data)
	if err != nil {
		return nil, err
	}
	return d.Apply(), nil
}

// snapshotDelta replays a snapshot's records onto the empty image.
func snapshotDelta(offset int64, epoch int32, data []byte) (*Delta, int, error) {
	recs, err := DecodeRecords(data)
	if err != nil {
		return nil, 0, fmt.Errorf("metadata: snapshot at offset %d: %w", offset, err)
	}
	d := NewDelta(EmptyImage())
	for _, rec := range recs {
		if err := d.Replay(offset, epoch, rec); err != nil {
			return nil, 0, fmt.Errorf("metadata: snapshot at offset %d: %w", offset, err)
		}
	}
	d.offset, d.epoch = offset, epoch
	return d, len(recs), nil
}

// Snapshot encodes the latest published image (the quorum's snapshot Take).
// It runs on the apply goroutine, so the image is the one at the applied
// offset.
func (l *Loader) Snapshot() []byte { return EncodeSnapshot(l.Image()) }

// Restore publishes the image of a snapshot in place of the current one
// (the quorum's snapshot Restore: at start-up, or when the leader sends a
// snapshot). Subscribers get a delta from the empty image: everything in
// the snapshot reads as created, and what the old image had beyond it is
// not reported removed, so a subscriber that keeps state should rebuild it
// from the image when delta.Base() is empty.
func (l *Loader) Restore(offset int64, epoch int32, data []byte) error {
	delta, n, err := snapshotDelta(offset, epoch, data)
	if err != nil {
		return err
	}
	next := delta.Apply()
	l.current.Store(next)
	l.log.Info("metadata image restored from a snapshot", "offset", offset, "epoch", epoch, "records", n)
	for _, s := range l.subscribers {
		s(delta, next)
	}
	return nil
}
