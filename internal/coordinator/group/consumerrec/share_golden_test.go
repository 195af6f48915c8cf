package consumerrec

import (
	"encoding/hex"
	"path/filepath"
	"reflect"
	"testing"
)

// readShareGoldens reads testdata/share/*.golden, which
// testdata/share/gen/run.sh writes with Kafka's own classes.
func readShareGoldens(t testing.TB) []goldenRecord {
	t.Helper()
	files, err := filepath.Glob("testdata/share/*.golden")
	if err != nil || len(files) == 0 {
		t.Fatalf("no share golden files: %v", err)
	}
	var out []goldenRecord
	for _, f := range files {
		out = append(out, readGoldenFile(t, f)...)
	}
	return out
}

// shareExpected holds the Go values of GenShareRecords.java's cases, in
// the form decoding gives.
func shareExpected() map[string]expected {
	gk := func(typ int16) *ShareGroupKey { return &ShareGroupKey{Type: typ, GroupID: "grp"} }
	mk := func(typ int16) *ShareMemberKey {
		return &ShareMemberKey{Type: typ, GroupID: "grp", MemberID: "member-1"}
	}
	meta, tam, spm := gk(TypeShareGroupMetadata), gk(TypeShareGroupTargetAssignmentMetadata), gk(TypeShareGroupStatePartitionMetadata)
	mem, tmem, cur := mk(TypeShareGroupMemberMetadata), mk(TypeShareGroupTargetAssignmentMember), mk(TypeShareGroupCurrentMemberAssignment)
	return map[string]expected{
		"ShareGroupMetadata/epoch":         {meta, &ShareGroupMetadataValue{Epoch: 5}},
		"ShareGroupMetadata/hash":          {meta, &ShareGroupMetadataValue{Epoch: 42, MetadataHash: 0x0123456789abcdef}},
		"ShareGroupMetadata/negative-hash": {&ShareGroupKey{Type: TypeShareGroupMetadata}, &ShareGroupMetadataValue{MetadataHash: -7}},
		"ShareGroupMetadata/tombstone":     {meta, nil},
		"ShareGroupMemberMetadata/member": {mem, &ShareGroupMemberMetadataValue{
			ClientID: "client-1", ClientHost: "/127.0.0.1", SubscribedTopicNames: []string{"a", "b"}}},
		"ShareGroupMemberMetadata/rack": {mem, &ShareGroupMemberMetadataValue{
			RackID: ptr("rack-a"), ClientID: "c", ClientHost: "h", SubscribedTopicNames: []string{}}},
		// Kafka's default rack id is "", not null.
		"ShareGroupMemberMetadata/defaults":            {mem, &ShareGroupMemberMetadataValue{RackID: ptr(""), SubscribedTopicNames: []string{}}},
		"ShareGroupMemberMetadata/tombstone":           {mem, nil},
		"ShareGroupTargetAssignmentMetadata/epoch":     {tam, &ShareGroupTargetAssignmentMetadataValue{AssignmentEpoch: 3}},
		"ShareGroupTargetAssignmentMetadata/timestamp": {tam, &ShareGroupTargetAssignmentMetadataValue{AssignmentEpoch: 7, AssignmentTimestamp: 1764780000000}},
		"ShareGroupTargetAssignmentMetadata/tombstone": {tam, nil},
		"ShareGroupTargetAssignmentMember/empty":       {tmem, &ShareGroupTargetAssignmentMemberValue{TopicPartitions: []TopicPartition{}}},
		"ShareGroupTargetAssignmentMember/topics": {tmem, &ShareGroupTargetAssignmentMemberValue{TopicPartitions: []TopicPartition{
			{TopicID: topic1, Partitions: []int32{0, 1, 2}},
			{TopicID: topic2, Partitions: []int32{}},
		}}},
		"ShareGroupTargetAssignmentMember/tombstone": {tmem, nil},
		"ShareGroupCurrentMemberAssignment/stable": {cur, &ShareGroupCurrentMemberAssignmentValue{
			MemberEpoch: 10, PreviousMemberEpoch: 9, AssignedPartitions: []TopicPartition{{TopicID: topic1, Partitions: []int32{0, 1}}}}},
		"ShareGroupCurrentMemberAssignment/empty":     {cur, &ShareGroupCurrentMemberAssignmentValue{AssignedPartitions: []TopicPartition{}}},
		"ShareGroupCurrentMemberAssignment/tombstone": {cur, nil},
		"ShareGroupStatePartitionMetadata/empty": {spm, &ShareGroupStatePartitionMetadataValue{
			InitializingTopics: []ShareTopicPartitions{}, InitializedTopics: []ShareTopicPartitions{}, DeletingTopics: []ShareTopic{}}},
		"ShareGroupStatePartitionMetadata/all": {spm, &ShareGroupStatePartitionMetadataValue{
			InitializingTopics: []ShareTopicPartitions{{TopicID: topic1, TopicName: "orders", Partitions: []int32{2, 3}}},
			InitializedTopics: []ShareTopicPartitions{
				{TopicID: topic1, TopicName: "orders", Partitions: []int32{0, 1}},
				{TopicID: topic2, TopicName: "paiements-été", Partitions: []int32{}},
			},
			DeletingTopics: []ShareTopic{{TopicID: topic2, TopicName: "gone"}},
		}},
		"ShareGroupStatePartitionMetadata/tombstone": {spm, nil},
	}
}

// TestShareGoldenEncode checks that the Go values encode to Kafka's bytes.
func TestShareGoldenEncode(t *testing.T) {
	want := shareExpected()
	seen := map[string]bool{}
	for _, g := range readShareGoldens(t) {
		e, ok := want[g.name]
		if !ok {
			t.Errorf("%s: golden case without a Go value", g.name)
			continue
		}
		seen[g.name] = true
		key, value := Encode(e.key, e.value)
		if hex.EncodeToString(key) != hex.EncodeToString(g.key) {
			t.Errorf("%s: key\n got %x\nwant %x", g.name, key, g.key)
		}
		if (value == nil) != (g.value == nil) || hex.EncodeToString(value) != hex.EncodeToString(g.value) {
			t.Errorf("%s: value\n got %x\nwant %x", g.name, value, g.value)
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("%s: Go value without a golden case", name)
		}
	}
}

// TestShareGoldenDecode checks that Kafka's bytes decode to the Go values.
func TestShareGoldenDecode(t *testing.T) {
	want := shareExpected()
	for _, g := range readShareGoldens(t) {
		e, ok := want[g.name]
		if !ok {
			continue // reported by TestShareGoldenEncode
		}
		k, v, err := DecodeShare(g.key, g.value)
		if err != nil {
			t.Errorf("%s: %v", g.name, err)
			continue
		}
		if !reflect.DeepEqual(k, e.key) {
			t.Errorf("%s: key\n got %#v\nwant %#v", g.name, k, e.key)
		}
		if !reflect.DeepEqual(v, e.value) {
			t.Errorf("%s: value\n got %#v\nwant %#v", g.name, v, e.value)
		}
	}
}

// TestShareDecodeRefusesOthers checks that consumer group keys and share
// keys do not cross: each decoder refuses the other's types.
func TestShareDecodeRefusesOthers(t *testing.T) {
	ck := (&ConsumerGroupMetadataKey{GroupID: "grp"}).AppendTo(nil)
	if _, _, err := DecodeShare(ck, nil); err == nil {
		t.Fatal("DecodeShare read a consumer group key")
	}
	sk := (&ShareGroupKey{Type: TypeShareGroupMetadata, GroupID: "grp"}).AppendTo(nil)
	if _, _, err := Decode(sk, nil); err == nil {
		t.Fatal("Decode read a share group key")
	}
	// A value of an unknown version is refused, as Kafka's serde does.
	if _, _, err := DecodeShare(sk, []byte{0, 1, 0, 0, 0, 1}); err == nil {
		t.Fatal("DecodeShare read value version 1")
	}
}

// FuzzDecodeShare checks that hostile input never panics and that what
// decodes re-encodes to the same bytes.
func FuzzDecodeShare(f *testing.F) {
	for _, g := range readShareGoldens(f) {
		f.Add(g.key, g.value)
	}
	f.Fuzz(func(t *testing.T, key, value []byte) {
		k, v, err := DecodeShare(key, value)
		if err != nil {
			return
		}
		k2, v2 := Encode(k, v)
		k3, v3, err := DecodeShare(k2, v2)
		if err != nil {
			t.Fatalf("re-decoding: %v", err)
		}
		if !reflect.DeepEqual(k, k3) || !reflect.DeepEqual(v, v3) {
			t.Fatalf("round trip changed the record: %#v %#v -> %#v %#v", k, v, k3, v3)
		}
	})
}
