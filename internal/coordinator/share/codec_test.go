package share

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// goldenRecord is one line of testdata/records.golden, which
// testdata/gen/run.sh writes with Kafka's own classes and serde.
type goldenRecord struct {
	name       string
	key, value []byte // value nil for a tombstone
}

func readGoldenLines(t testing.TB, path string, fields int) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.Fields(sc.Text())
		if len(parts) != fields {
			t.Fatalf("%s: bad line %q", path, sc.Text())
		}
		out = append(out, parts)
	}
	if err := sc.Err(); err != nil || len(out) == 0 {
		t.Fatalf("%s: %v (%d lines)", path, err, len(out))
	}
	return out
}

func readRecordGoldens(t testing.TB) []goldenRecord {
	var out []goldenRecord
	for _, l := range readGoldenLines(t, "testdata/records.golden", 3) {
		r := goldenRecord{name: l[0], key: mustHex(t, l[1])}
		if l[2] != "-" {
			r.value = mustHex(t, l[2])
		}
		out = append(out, r)
	}
	return out
}

func mustHex(t testing.TB, s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGoldenRecords decodes Kafka's bytes and checks that encoding the
// result gives the same bytes back.
func TestGoldenRecords(t *testing.T) {
	for _, g := range readRecordGoldens(t) {
		t.Run(g.name, func(t *testing.T) {
			r, ok, err := decodeRecord(g.key, g.value)
			if err != nil || !ok {
				t.Fatalf("decode: ok=%v err=%v", ok, err)
			}
			enc := r.encode()
			if !bytes.Equal(enc.Key, g.key) || !bytes.Equal(enc.Value, g.value) {
				t.Fatalf("re-encoded\n key %x\nval %x\nwant\n key %x\nval %x", enc.Key, enc.Value, g.key, g.value)
			}
		})
	}
}

// TestGoldenRecordValues pins the decoded fields of two goldens, so that a
// decoder and encoder wrong in the same way cannot pass.
func TestGoldenRecordValues(t *testing.T) {
	byName := map[string]goldenRecord{}
	for _, g := range readRecordGoldens(t) {
		byName[g.name] = g
	}
	r, _, err := decodeRecord(byName["snapshot-batches"].key, byName["snapshot-batches"].value)
	if err != nil {
		t.Fatal(err)
	}
	want := SnapshotValue{SnapshotEpoch: 7, StateEpoch: 2, LeaderEpoch: 5, StartOffset: 100, DeliveryCompleteCount: 12,
		CreateTimestamp: 1700000000001, WriteTimestamp: 1700000000002, StateBatches: []StateBatch{
			{100, 109, 2, 1}, {110, 110, 0, 3}, {111, 1<<63 - 1, 4, -1}}}
	if r.typ != RecordTypeSnapshot || r.key.GroupID != "grp" || r.key.Partition != 3 || r.key.TopicID[0] != 1 || !reflect.DeepEqual(*r.snapshot, want) {
		t.Fatalf("snapshot-batches decoded as %+v %+v", r.key, r.snapshot)
	}
	u, _, err := decodeRecord(byName["update-empty"].key, byName["update-empty"].value)
	if err != nil {
		t.Fatal(err)
	}
	if u.typ != RecordTypeUpdate || u.update.StartOffset != -1 || u.update.LeaderEpoch != -1 || u.update.DeliveryCompleteCount != -1 {
		t.Fatalf("update-empty decoded as %+v", u.update)
	}
}

func TestDecodeRefusals(t *testing.T) {
	g := readRecordGoldens(t)[1] // snapshot-batches
	for name, c := range map[string]struct{ key, value []byte }{
		"truncated key":       {g.key[:len(g.key)-1], g.value},
		"trailing key bytes":  {append(append([]byte{}, g.key...), 0), g.value},
		"truncated value":     {g.key, g.value[:len(g.value)-3]},
		"value version 1":     {g.key, append([]byte{0, 1}, g.value[2:]...)},
		"update tombstone":    {AppendKey(nil, RecordTypeUpdate, Key{GroupID: "g"}), nil},
		"huge batch count":    {g.key, append(append([]byte{}, g.value[:38]...), 0xff, 0xff, 0xff, 0x0f)},
		"null group in a key": {[]byte{0, 0, 0xff, 0xff}, g.value},
	} {
		if _, _, err := decodeRecord(c.key, c.value); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	// Unknown record types are skipped, not refused.
	if _, ok, err := decodeRecord([]byte{0, 9, 1, 2}, []byte{1}); ok || err != nil {
		t.Errorf("unknown type: ok=%v err=%v", ok, err)
	}
}

// TestCombineGolden runs CombineStateBatches on the inputs Kafka's
// PersisterStateBatchCombiner was run on (fixed cases and 400 random ones)
// and expects its output.
func TestCombineGolden(t *testing.T) {
	for i, l := range readGoldenLines(t, "testdata/combine.golden", 4) {
		start, err := strconv.ParseInt(l[0], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		got := formatBatches(CombineStateBatches(parseBatches(t, l[1]), parseBatches(t, l[2]), start))
		if got != l[3] {
			t.Errorf("case %d: combine(start %d, %s, %s) = %s, Kafka %s", i, start, l[1], l[2], got, l[3])
		}
	}
}
