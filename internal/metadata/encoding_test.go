package metadata

import (
	"errors"
	"log/slog"
	"reflect"
	"testing"

	"github.com/sluice-io/sluice/internal/kafka"
)

func sampleRecords() []Record {
	rack, val := "rack-a", "compact"
	id := kafka.UUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	return []Record{
		&ClusterIDRecord{ClusterID: "c1"},
		&FeatureLevelRecord{Name: MetadataVersionFeature, Level: 7},
		&TopicRecord{Name: "orders", TopicID: id},
		&PartitionRecord{TopicID: id, Partition: 3, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2}, Leader: 1, LeaderEpoch: 4, PartitionEpoch: 9},
		&PartitionChangeRecord{TopicID: id, Partition: 3, Leader: NoLeaderChange, ISR: []int32{}},
		&PartitionChangeRecord{TopicID: id, Partition: 3, Leader: 2, Replicas: []int32{2, 3}},
		&RemoveTopicRecord{TopicID: id},
		&ConfigRecord{ResourceType: ConfigResourceTopic, ResourceName: "orders", Name: "cleanup.policy", Value: &val},
		&ConfigRecord{ResourceType: ConfigResourceBroker, ResourceName: "", Name: "x"},
		&ProducerIDsRecord{BrokerID: 1, BrokerEpoch: 5, NextProducerID: 2000},
		&RegisterBrokerRecord{BrokerID: 1, IncarnationID: id, BrokerEpoch: 5, Endpoints: []Endpoint{{Name: "PLAINTEXT", Host: "h", Port: 9092, SecurityProtocol: 0}, {Name: "SSL", Host: "h", Port: 9093, SecurityProtocol: 1}}, Rack: &rack, Fenced: true},
		&RegisterBrokerRecord{BrokerID: 2},
		&UnregisterBrokerRecord{BrokerID: 1, BrokerEpoch: 5},
		&FenceBrokerRecord{BrokerID: 1, BrokerEpoch: 5},
		&UnfenceBrokerRecord{BrokerID: 1, BrokerEpoch: 5},
		&BrokerRegistrationChangeRecord{BrokerID: 1, BrokerEpoch: 5, Fenced: FenceUnfenced},
		&UserScramCredentialRecord{Name: "alice", Mechanism: ScramSHA512, Salt: []byte("salt"), StoredKey: []byte{1, 2}, ServerKey: []byte{3}, Iterations: 8192},
		&RemoveUserScramCredentialRecord{Name: "alice", Mechanism: ScramSHA256},
		&AccessControlEntryRecord{Binding: ACLBinding{Resource: ACLResource{Type: ACLResourceTopic, Name: "orders-", PatternType: ACLPatternPrefixed},
			Entry: ACLEntry{Principal: "User:alice", Host: "*", Operation: ACLOpRead, Permission: ACLPermissionAllow}}},
		&RemoveAccessControlEntryRecord{Binding: ACLBinding{Resource: ACLResource{Type: ACLResourceCluster, Name: ACLClusterName, PatternType: ACLPatternLiteral},
			Entry: ACLEntry{Principal: "User:bob", Host: "10.0.0.1", Operation: ACLOpAlter, Permission: ACLPermissionDeny}}},
		&ClientQuotaRecord{Entity: QuotaEntity{User: QuotaName("alice"), ClientID: QuotaDefault()}, Key: QuotaProducerByteRate, Value: 1024},
		&ClientQuotaRecord{Entity: QuotaEntity{IP: QuotaName("10.0.0.1")}, Key: QuotaConnectionCreationRate, Remove: true},
	}
}

func TestRecordRoundTrip(t *testing.T) {
	recs := sampleRecords()
	for _, r := range recs {
		got, err := DecodeRecord(EncodeRecord(r))
		if err != nil {
			t.Fatalf("%T: %v", r, err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Fatalf("%T: got %+v, want %+v", r, got, r)
		}
	}
	got, err := DecodeRecords(EncodeRecords(recs))
	if err != nil || !reflect.DeepEqual(got, recs) {
		t.Fatalf("DecodeRecords: %v", err)
	}
}

func TestDecodeRecordRejects(t *testing.T) {
	good := EncodeRecord(&TopicRecord{Name: "t", TopicID: kafka.UUID{1}})
	unknown := append([]byte{0x7f, 0x00}, good[2:]...)
	if _, err := DecodeRecord(unknown); !errors.Is(err, ErrUnknownRecordType) {
		t.Errorf("unknown type: %v", err)
	}
	newer := append([]byte{}, good...)
	newer[3] = 1
	if _, err := DecodeRecord(newer); !errors.Is(err, ErrUnsupportedVersion) {
		t.Errorf("newer version: %v", err)
	}
	for n := 0; n < len(good); n++ {
		if _, err := DecodeRecord(good[:n]); err == nil {
			t.Errorf("truncated to %d bytes: no error", n)
		}
	}
	if _, err := DecodeRecord(append(good, 0)); !errors.Is(err, ErrCorruptRecord) {
		t.Errorf("trailing byte: %v", err)
	}
	if _, err := DecodeRecords([]byte{0xff, 0xff, 0xff, 0x7f}); err == nil {
		t.Error("huge record count: no error")
	}
}

func TestLoaderPublishesAndNotifies(t *testing.T) {
	var seen []int64
	l := NewLoader(slog.New(slog.DiscardHandler), func(d *Delta, im *Image) {
		if d.Base().Offset() >= im.Offset() {
			t.Errorf("delta base %d not before image %d", d.Base().Offset(), im.Offset())
		}
		seen = append(seen, im.Offset())
	})
	if err := l.Apply(0, 1, EncodeRecords(BootstrapRecords("cid", 1))); err != nil {
		t.Fatal(err)
	}
	id := kafka.UUID{9}
	if err := l.Apply(1, 1, EncodeRecords([]Record{&TopicRecord{Name: "a", TopicID: id}})); err != nil {
		t.Fatal(err)
	}
	// A bad entry (duplicate topic) publishes nothing and notifies no one.
	before := l.Image()
	if err := l.Apply(2, 1, EncodeRecords([]Record{&TopicRecord{Name: "a", TopicID: id}})); err == nil {
		t.Fatal("duplicate topic accepted")
	}
	if err := l.Apply(1, 1, EncodeRecords(nil)); err == nil {
		t.Fatal("old offset accepted")
	}
	if l.Image() != before {
		t.Fatal("image changed by a refused entry")
	}
	if im := l.Image(); im.ClusterID() != "cid" || im.FeatureLevel(MetadataVersionFeature) != 1 || im.Offset() != 1 {
		t.Fatalf("image: %s", im)
	}
	if _, ok := l.Image().Topic("a"); !ok {
		t.Fatal("topic a missing")
	}
	if !reflect.DeepEqual(seen, []int64{0, 1}) {
		t.Fatalf("notified %v", seen)
	}
}

func FuzzDecodeRecords(f *testing.F) {
	f.Add(EncodeRecords(sampleRecords()))
	for _, r := range sampleRecords() {
		f.Add(EncodeRecords([]Record{r}))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, err := DecodeRecords(b)
		if err != nil {
			return
		}
		again, err := DecodeRecords(EncodeRecords(recs))
		if err != nil || !reflect.DeepEqual(again, recs) {
			t.Fatalf("re-encoding changed the records: %v", err)
		}
		// Replay must refuse or accept, never panic.
		d := NewDelta(EmptyImage())
		for i, r := range recs {
			_ = d.Replay(int64(i), 0, r)
		}
		_ = d.Apply().String()
	})
}

// TestDirectoryFieldsVersions: the directory fields raise a record's version
// only when present, so a cluster with directory assignment off writes the
// bytes the previous release reads.
func TestDirectoryFieldsVersions(t *testing.T) {
	id := kafka.UUID{9}
	d := []kafka.UUID{{0xd1, 15: 1}, DirLost}
	cases := []struct {
		rec  Record
		want int16
	}{
		{&PartitionRecord{TopicID: id, Replicas: []int32{1, 2}}, 0},
		{&PartitionRecord{TopicID: id, Replicas: []int32{1, 2}, AddingReplicas: []int32{2}}, 1},
		{&PartitionRecord{TopicID: id, Replicas: []int32{1, 2}, Directories: d}, 2},
		{&PartitionChangeRecord{TopicID: id, Leader: 1}, 0},
		{&PartitionChangeRecord{TopicID: id, Leader: 1, Directories: d}, 2},
		{&PartitionChangeRecord{TopicID: id, Leader: 1, RemovingReplicas: []int32{}, Directories: d}, 2},
		{&RegisterBrokerRecord{BrokerID: 1}, 0},
		{&RegisterBrokerRecord{BrokerID: 1, LogDirs: d}, 1},
		{&BrokerRegistrationChangeRecord{BrokerID: 1}, 0},
		{&BrokerRegistrationChangeRecord{BrokerID: 1, LogDirs: []kafka.UUID{}}, 1},
	}
	for _, c := range cases {
		b := EncodeRecord(c.rec)
		if v := int16(b[2])<<8 | int16(b[3]); v != c.want {
			t.Errorf("%+v: version %d, want %d", c.rec, v, c.want)
		}
		got, err := DecodeRecord(b)
		if err != nil || !reflect.DeepEqual(got, c.rec) {
			t.Errorf("%+v: round trip %+v, %v", c.rec, got, err)
		}
	}
	if !DirReserved(DirMigrating) || DirReserved(d[0]) {
		t.Error("DirReserved")
	}
	if DirectoryAssignment(map[string]int16{MetadataVersionFeature: 33}) {
		t.Error("directory assignment on without its feature")
	}
}
