package consumerrec

import (
	"bufio"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/internal/kafka"
)

// goldenRecord is one line of a testdata/*.golden file, which
// testdata/gen/run.sh writes with Kafka's own classes and serde.
type goldenRecord struct {
	name       string // the file (record type) and case
	key, value []byte // value nil for a tombstone
}

func readGoldens(t testing.TB) []goldenRecord {
	t.Helper()
	files, err := filepath.Glob("testdata/*.golden")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	var out []goldenRecord
	for _, f := range files {
		out = append(out, readGoldenFile(t, f)...)
	}
	return out
}

func readGoldenFile(t testing.TB, path string) []goldenRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	base := strings.TrimSuffix(filepath.Base(path), ".golden")
	var out []goldenRecord
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 {
			t.Fatalf("%s: bad line %q", path, sc.Text())
		}
		r := goldenRecord{name: base + "/" + fields[0], key: mustHex(t, fields[1])}
		if fields[2] != "-" {
			r.value = mustHex(t, fields[2])
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

func ptr(s string) *string { return &s }

var (
	topic1 = kafka.UUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	topic2 = kafka.UUID{0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77}
)

// expected holds the Go values of GenRecords.java's cases, in the form
// decoding gives (non-nil empty slices, absent tags as defaults).
type expected struct {
	key   Key
	value Value // nil for a tombstone
}

func expectedRecords() map[string]expected {
	m := map[string]expected{}
	for k, v := range metadataCases() {
		m[k] = v
	}
	for k, v := range memberCases() {
		m[k] = v
	}
	for k, v := range assignmentCases() {
		m[k] = v
	}
	return m
}

func metadataCases() map[string]expected {
	grp := &ConsumerGroupMetadataKey{GroupID: "grp"}
	pm := &ConsumerGroupPartitionMetadataKey{GroupID: "grp"}
	tam := &ConsumerGroupTargetAssignmentMetadataKey{GroupID: "grp"}
	re := &ConsumerGroupRegularExpressionKey{GroupID: "grp", RegularExpression: "orders-.*"}
	return map[string]expected{
		"ConsumerGroupMetadata/epoch":          {grp, &ConsumerGroupMetadataValue{Epoch: 5}},
		"ConsumerGroupMetadata/hash":           {grp, &ConsumerGroupMetadataValue{Epoch: 42, MetadataHash: 0x0123456789abcdef}},
		"ConsumerGroupMetadata/negative-hash":  {&ConsumerGroupMetadataKey{}, &ConsumerGroupMetadataValue{MetadataHash: -7}},
		"ConsumerGroupMetadata/tombstone":      {grp, nil},
		"ConsumerGroupPartitionMetadata/empty": {pm, &ConsumerGroupPartitionMetadataValue{Topics: []TopicMetadata{}}},
		"ConsumerGroupPartitionMetadata/topics": {pm, &ConsumerGroupPartitionMetadataValue{Topics: []TopicMetadata{
			{TopicID: topic1, TopicName: "orders", NumPartitions: 2, PartitionMetadata: []PartitionMetadata{
				{Partition: 0, Racks: []string{"rack-a", "rack-b"}},
				{Partition: 1, Racks: []string{}},
			}},
			{TopicID: topic2, TopicName: "paiements-été", PartitionMetadata: []PartitionMetadata{}},
		}}},
		"ConsumerGroupPartitionMetadata/tombstone":        {pm, nil},
		"ConsumerGroupTargetAssignmentMetadata/epoch":     {tam, &ConsumerGroupTargetAssignmentMetadataValue{AssignmentEpoch: 3}},
		"ConsumerGroupTargetAssignmentMetadata/timestamp": {tam, &ConsumerGroupTargetAssignmentMetadataValue{AssignmentEpoch: 7, AssignmentTimestamp: 1764780000000}},
		"ConsumerGroupTargetAssignmentMetadata/tombstone": {tam, nil},
		"ConsumerGroupRegularExpression/topics": {re, &ConsumerGroupRegularExpressionValue{
			Topics: []string{"orders-1", "orders-2"}, Version: 123, Timestamp: 1764780000000}},
		"ConsumerGroupRegularExpression/empty":     {re, &ConsumerGroupRegularExpressionValue{Topics: []string{}}},
		"ConsumerGroupRegularExpression/tombstone": {re, nil},
	}
}

func memberCases() map[string]expected {
	key := &ConsumerGroupMemberMetadataKey{GroupID: "grp", MemberID: "member-1"}
	return map[string]expected{
		"ConsumerGroupMemberMetadata/consumer": {key, &ConsumerGroupMemberMetadataValue{
			ClientID: "client-1", ClientHost: "/127.0.0.1", SubscribedTopicNames: []string{"a", "b"},
			RebalanceTimeoutMs: 30000, ServerAssignor: ptr("uniform"),
		}},
		"ConsumerGroupMemberMetadata/classic": {key, &ConsumerGroupMemberMetadataValue{
			InstanceID: ptr("instance-1"), RackID: ptr("rack-a"), ClientID: "c", ClientHost: "h",
			SubscribedTopicNames: []string{}, SubscribedTopicRegex: ptr("orders-.*"), RebalanceTimeoutMs: 60000,
			ClassicMemberMetadata: &ClassicMemberMetadata{SessionTimeoutMs: 45000, SupportedProtocols: []ClassicProtocol{
				{Name: "range", Metadata: []byte{0, 3, 0, 0, 0, 1, 0xff}},
				{Name: "cooperative-sticky", Metadata: []byte{}},
			}},
		}},
		"ConsumerGroupMemberMetadata/classic-no-protocols": {key, &ConsumerGroupMemberMetadataValue{
			InstanceID: ptr(""), RackID: ptr(""), ClientID: "c", ClientHost: "h", SubscribedTopicNames: []string{},
			SubscribedTopicRegex: ptr(""), RebalanceTimeoutMs: -1, ServerAssignor: ptr(""),
			ClassicMemberMetadata: &ClassicMemberMetadata{SessionTimeoutMs: 10000, SupportedProtocols: []ClassicProtocol{}},
		}},
		"ConsumerGroupMemberMetadata/defaults": {key, &ConsumerGroupMemberMetadataValue{
			InstanceID: ptr(""), RackID: ptr(""), SubscribedTopicNames: []string{},
			SubscribedTopicRegex: ptr(""), RebalanceTimeoutMs: -1, ServerAssignor: ptr(""),
			ClassicMemberMetadata: &ClassicMemberMetadata{SupportedProtocols: []ClassicProtocol{}},
		}},
		"ConsumerGroupMemberMetadata/tombstone": {key, nil},
	}
}

func assignmentCases() map[string]expected {
	tam := &ConsumerGroupTargetAssignmentMemberKey{GroupID: "grp", MemberID: "member-1"}
	cma := &ConsumerGroupCurrentMemberAssignmentKey{GroupID: "grp", MemberID: "member-1"}
	none := []TopicPartitions{}
	return map[string]expected{
		"ConsumerGroupTargetAssignmentMember/empty": {tam, &ConsumerGroupTargetAssignmentMemberValue{TopicPartitions: []TopicPartition{}}},
		"ConsumerGroupTargetAssignmentMember/topics": {tam, &ConsumerGroupTargetAssignmentMemberValue{TopicPartitions: []TopicPartition{
			{TopicID: topic1, Partitions: []int32{0, 1, 2}},
			{TopicID: topic2, Partitions: []int32{}},
		}}},
		"ConsumerGroupTargetAssignmentMember/tombstone": {tam, nil},
		"ConsumerGroupCurrentMemberAssignment/stable": {cma, &ConsumerGroupCurrentMemberAssignmentValue{
			MemberEpoch: 10, PreviousMemberEpoch: 9,
			AssignedPartitions:          []TopicPartitions{{TopicID: topic1, Partitions: []int32{0, 1}, AssignmentEpochs: []int32{10, 9}}},
			PartitionsPendingRevocation: none,
		}},
		"ConsumerGroupCurrentMemberAssignment/epochs-null": {cma, &ConsumerGroupCurrentMemberAssignmentValue{
			MemberEpoch: 3, PreviousMemberEpoch: 2, State: 1,
			AssignedPartitions:          []TopicPartitions{{TopicID: topic1, Partitions: []int32{3}}},
			PartitionsPendingRevocation: none,
		}},
		"ConsumerGroupCurrentMemberAssignment/revoking": {cma, &ConsumerGroupCurrentMemberAssignmentValue{
			MemberEpoch: -1, PreviousMemberEpoch: -2, State: 2,
			AssignedPartitions:          []TopicPartitions{{TopicID: topic1, Partitions: []int32{}, AssignmentEpochs: []int32{}}},
			PartitionsPendingRevocation: []TopicPartitions{{TopicID: topic2, Partitions: []int32{5, 6}, AssignmentEpochs: []int32{4, 4}}},
		}},
		"ConsumerGroupCurrentMemberAssignment/empty":     {cma, &ConsumerGroupCurrentMemberAssignmentValue{AssignedPartitions: none, PartitionsPendingRevocation: none}},
		"ConsumerGroupCurrentMemberAssignment/tombstone": {cma, nil},
	}
}

// TestGoldenEncode checks that the Go values encode to Kafka's bytes.
func TestGoldenEncode(t *testing.T) {
	want := expectedRecords()
	seen := map[string]bool{}
	for _, g := range readGoldens(t) {
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

// TestGoldenDecode checks that Kafka's bytes decode to the Go values.
func TestGoldenDecode(t *testing.T) {
	want := expectedRecords()
	for _, g := range readGoldens(t) {
		e, ok := want[g.name]
		if !ok {
			continue // reported by TestGoldenEncode
		}
		k, v, err := Decode(g.key, g.value)
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
