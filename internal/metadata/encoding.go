package metadata

import (
	"encoding/binary"
	"fmt"

	"github.com/sluice-io/sluice/internal/kafka"
)

// EncodeRecord frames one record: type int16, version int16, then the fields
// of that version (docs/metadata-records.md).
func EncodeRecord(r Record) []byte {
	w := &writer{}
	w.int16(int16(r.Type()))
	w.int16(writeVersion(r))
	r.encode(w)
	return w.b
}

// writeVersion is the version a record is written at: the lowest that
// holds its fields. A partition record without reassignment fields is
// written at version 0, byte for byte as before they existed, so a log
// without reassignments stays readable by builds that predate them; the
// directory fields (Partition/PartitionChange 2, RegisterBroker and
// BrokerRegistrationChange 1) are set only when DirectoryAssignment is on.
func writeVersion(r Record) int16 {
	switch x := r.(type) {
	case *PartitionRecord:
		return partitionVersion(x.Directories, x.RemovingReplicas, x.AddingReplicas)
	case *PartitionChangeRecord:
		return partitionVersion(x.Directories, x.RemovingReplicas, x.AddingReplicas)
	case *RegisterBrokerRecord:
		if x.LogDirs == nil {
			return 0
		}
	case *BrokerRegistrationChangeRecord:
		if x.LogDirs == nil {
			return 0
		}
	}
	return r.Version()
}

func partitionVersion(dirs []kafka.UUID, removing, adding []int32) int16 {
	switch {
	case dirs != nil:
		return 2
	case removing != nil || adding != nil:
		return 1
	default:
		return 0
	}
}

// DecodeRecord decodes one framed record. An unknown type, a version newer
// than this build writes, truncation or trailing bytes are errors.
func DecodeRecord(b []byte) (Record, error) {
	rd := &reader{b: b}
	typ := RecordType(rd.int16())
	version := rd.int16()
	if rd.err != nil {
		return nil, fmt.Errorf("metadata: record header: %w", rd.err)
	}
	rec := newRecord(typ)
	if rec == nil {
		return nil, fmt.Errorf("%w: %d", ErrUnknownRecordType, typ)
	}
	if version < 0 || version > rec.Version() {
		return nil, fmt.Errorf("%w: type %d version %d (max %d)", ErrUnsupportedVersion, typ, version, rec.Version())
	}
	decodeFields(rec, version, rd)
	if rd.err != nil {
		return nil, fmt.Errorf("metadata: record type %d: %w", typ, rd.err)
	}
	if len(rd.b) != 0 {
		return nil, fmt.Errorf("%w: record type %d has %d trailing bytes", ErrCorruptRecord, typ, len(rd.b))
	}
	return rec, nil
}

// EncodeRecords encodes the records of one proposal (one raft entry): a
// uvarint count, then each record as uvarint length and EncodeRecord bytes.
func EncodeRecords(recs []Record) []byte {
	out := binary.AppendUvarint(nil, uint64(len(recs)))
	for _, r := range recs {
		b := EncodeRecord(r)
		out = binary.AppendUvarint(out, uint64(len(b)))
		out = append(out, b...)
	}
	return out
}

// DecodeRecords decodes what EncodeRecords wrote.
func DecodeRecords(b []byte) ([]Record, error) {
	rd := &reader{b: b}
	n := rd.length("record count")
	if rd.err != nil {
		return nil, rd.err
	}
	// Every record takes at least 5 bytes, which bounds a corrupt count.
	if n > len(rd.b)/5 {
		return nil, fmt.Errorf("%w: %d records in %d bytes", ErrCorruptRecord, n, len(b))
	}
	out := make([]Record, 0, n)
	for i := 0; i < n; i++ {
		size := rd.length("record")
		body := rd.take(size, "record")
		if rd.err != nil {
			return nil, fmt.Errorf("metadata: record %d of %d: %w", i, n, rd.err)
		}
		rec, err := DecodeRecord(body)
		if err != nil {
			return nil, fmt.Errorf("metadata: record %d of %d: %w", i, n, err)
		}
		out = append(out, rec)
	}
	if len(rd.b) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes after %d records", ErrCorruptRecord, len(rd.b), n)
	}
	return out, nil
}

func newRecord(t RecordType) Record {
	switch t {
	case TypeTopic:
		return &TopicRecord{}
	case TypePartition:
		return &PartitionRecord{}
	case TypePartitionChange:
		return &PartitionChangeRecord{}
	case TypeRemoveTopic:
		return &RemoveTopicRecord{}
	case TypeConfig:
		return &ConfigRecord{}
	case TypeProducerIDs:
		return &ProducerIDsRecord{}
	case TypeRegisterBroker:
		return &RegisterBrokerRecord{}
	case TypeUnregisterBroker:
		return &UnregisterBrokerRecord{}
	case TypeFenceBroker:
		return &FenceBrokerRecord{}
	case TypeUnfenceBroker:
		return &UnfenceBrokerRecord{}
	case TypeBrokerRegistrationChange:
		return &BrokerRegistrationChangeRecord{}
	case TypeFeatureLevel:
		return &FeatureLevelRecord{}
	case TypeClusterID:
		return &ClusterIDRecord{}
	default:
		return newSecurityRecord(t)
	}
}

// decodeFields fills rec from version 0 fields; when a type gains a version,
// its case reads the new fields only when the record's version has them.
func decodeFields(rec Record, version int16, r *reader) {
	switch x := rec.(type) {
	case *TopicRecord:
		x.Name = r.string()
		x.TopicID = r.uuid()
	case *PartitionRecord:
		x.TopicID = r.uuid()
		x.Partition = r.int32()
		x.Replicas = r.int32s()
		x.ISR = r.int32s()
		x.Leader = r.int32()
		x.LeaderEpoch = r.int32()
		x.PartitionEpoch = r.int32()
		if version >= 1 {
			x.RemovingReplicas = r.int32s()
			x.AddingReplicas = r.int32s()
		}
		if version >= 2 {
			x.Directories = r.uuids()
		}
	case *PartitionChangeRecord:
		x.TopicID = r.uuid()
		x.Partition = r.int32()
		x.Leader = r.int32()
		x.ISR = r.int32s()
		x.Replicas = r.int32s()
		if version >= 1 {
			x.RemovingReplicas = r.int32s()
			x.AddingReplicas = r.int32s()
		}
		if version >= 2 {
			x.Directories = r.uuids()
		}
	case *RemoveTopicRecord:
		x.TopicID = r.uuid()
	case *ConfigRecord:
		x.ResourceType = ConfigResourceType(r.int8())
		x.ResourceName = r.string()
		x.Name = r.string()
		x.Value = r.nullableString()
	case *ProducerIDsRecord:
		x.BrokerID = r.int32()
		x.BrokerEpoch = r.int64()
		x.NextProducerID = r.int64()
	case *RegisterBrokerRecord:
		x.BrokerID = r.int32()
		x.IncarnationID = r.uuid()
		x.BrokerEpoch = r.int64()
		n := r.length("endpoints")
		if r.err == nil && n > len(r.b)/8 {
			r.fail("endpoints")
		}
		if r.err == nil && n > 0 {
			x.Endpoints = make([]Endpoint, n)
			for i := range x.Endpoints {
				x.Endpoints[i] = Endpoint{Name: r.string(), Host: r.string(), Port: r.int32(), SecurityProtocol: r.int16()}
			}
		}
		x.Rack = r.nullableString()
		x.Fenced = r.bool()
		if version >= 1 {
			x.LogDirs = r.uuids()
		}
	case *UnregisterBrokerRecord:
		x.BrokerID = r.int32()
		x.BrokerEpoch = r.int64()
	case *FenceBrokerRecord:
		x.BrokerID = r.int32()
		x.BrokerEpoch = r.int64()
	case *UnfenceBrokerRecord:
		x.BrokerID = r.int32()
		x.BrokerEpoch = r.int64()
	case *BrokerRegistrationChangeRecord:
		x.BrokerID = r.int32()
		x.BrokerEpoch = r.int64()
		x.Fenced = r.int8()
		if version >= 1 {
			x.LogDirs = r.uuids()
		}
	case *FeatureLevelRecord:
		x.Name = r.string()
		x.Level = r.int16()
	case *ClusterIDRecord:
		x.ClusterID = r.string()
	case securityDecoder:
		x.decode(r)
	}
}

func (x *TopicRecord) encode(w *writer) { w.string(x.Name); w.uuid(x.TopicID) }

func (x *PartitionRecord) encode(w *writer) {
	w.uuid(x.TopicID)
	w.int32(x.Partition)
	w.int32s(x.Replicas)
	w.int32s(x.ISR)
	w.int32(x.Leader)
	w.int32(x.LeaderEpoch)
	w.int32(x.PartitionEpoch)
	v := writeVersion(x)
	if v >= 1 {
		w.int32s(x.RemovingReplicas)
		w.int32s(x.AddingReplicas)
	}
	if v >= 2 {
		w.uuids(x.Directories)
	}
}

func (x *PartitionChangeRecord) encode(w *writer) {
	w.uuid(x.TopicID)
	w.int32(x.Partition)
	w.int32(x.Leader)
	w.int32s(x.ISR)
	w.int32s(x.Replicas)
	v := writeVersion(x)
	if v >= 1 {
		w.int32s(x.RemovingReplicas)
		w.int32s(x.AddingReplicas)
	}
	if v >= 2 {
		w.uuids(x.Directories)
	}
}

func (x *RemoveTopicRecord) encode(w *writer) { w.uuid(x.TopicID) }

func (x *ConfigRecord) encode(w *writer) {
	w.int8(int8(x.ResourceType))
	w.string(x.ResourceName)
	w.string(x.Name)
	w.nullableString(x.Value)
}

func (x *ProducerIDsRecord) encode(w *writer) {
	w.int32(x.BrokerID)
	w.int64(x.BrokerEpoch)
	w.int64(x.NextProducerID)
}

func (x *RegisterBrokerRecord) encode(w *writer) {
	w.int32(x.BrokerID)
	w.uuid(x.IncarnationID)
	w.int64(x.BrokerEpoch)
	w.b = binary.AppendUvarint(w.b, uint64(len(x.Endpoints)))
	for _, e := range x.Endpoints {
		w.string(e.Name)
		w.string(e.Host)
		w.int32(e.Port)
		w.int16(e.SecurityProtocol)
	}
	w.nullableString(x.Rack)
	w.bool(x.Fenced)
	if writeVersion(x) >= 1 {
		w.uuids(x.LogDirs)
	}
}

func (x *UnregisterBrokerRecord) encode(w *writer) { w.int32(x.BrokerID); w.int64(x.BrokerEpoch) }
func (x *FenceBrokerRecord) encode(w *writer)      { w.int32(x.BrokerID); w.int64(x.BrokerEpoch) }
func (x *UnfenceBrokerRecord) encode(w *writer)    { w.int32(x.BrokerID); w.int64(x.BrokerEpoch) }

func (x *BrokerRegistrationChangeRecord) encode(w *writer) {
	w.int32(x.BrokerID)
	w.int64(x.BrokerEpoch)
	w.int8(x.Fenced)
	if writeVersion(x) >= 1 {
		w.uuids(x.LogDirs)
	}
}

func (x *FeatureLevelRecord) encode(w *writer) { w.string(x.Name); w.int16(x.Level) }
func (x *ClusterIDRecord) encode(w *writer)    { w.string(x.ClusterID) }
