package metadata

import (
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// parseSecurityRecord reads the golden files' security records:
//
//	scram user=U mech=256|512 iterations=N [salt=S]
//	remove-scram user=U mech=256|512
//	acl|remove-acl type=topic name=N pattern=literal|prefixed principal=P host=H op=read perm=allow
//	quota [user=U|<default>] [client=C|<default>] [ip=I] key=K (value=V | remove=true)
func parseSecurityRecord(kind string, kv map[string]string) (Record, bool) {
	mech := ScramSHA256
	if kv["mech"] == "512" {
		mech = ScramSHA512
	}
	switch kind {
	case "scram":
		n, _ := strconv.Atoi(kv["iterations"])
		return &UserScramCredentialRecord{Name: kv["user"], Mechanism: mech, Salt: []byte(kv["salt"]),
			StoredKey: []byte("stored-" + kv["user"]), ServerKey: []byte("server-" + kv["user"]), Iterations: int32(n)}, true
	case "remove-scram":
		return &RemoveUserScramCredentialRecord{Name: kv["user"], Mechanism: mech}, true
	case "acl":
		return &AccessControlEntryRecord{Binding: parseBinding(kv)}, true
	case "remove-acl":
		return &RemoveAccessControlEntryRecord{Binding: parseBinding(kv)}, true
	case "quota":
		var e QuotaEntity
		for k, slot := range map[string]*QuotaEntityName{"user": &e.User, "client": &e.ClientID, "ip": &e.IP} {
			if v, ok := kv[k]; ok {
				*slot = QuotaName(v)
				if v == "<default>" {
					*slot = QuotaDefault()
				}
			}
		}
		v, _ := strconv.ParseFloat(kv["value"], 64)
		_, remove := kv["remove"]
		return &ClientQuotaRecord{Entity: e, Key: kv["key"], Value: v, Remove: remove}, true
	}
	return nil, false
}

func parseBinding(kv map[string]string) ACLBinding {
	code := func(names []string, s string) int8 {
		for i, n := range names {
			if strings.EqualFold(n, s) {
				return int8(i)
			}
		}
		n, _ := strconv.Atoi(s)
		return int8(n)
	}
	return ACLBinding{
		Resource: ACLResource{Type: ACLResourceType(code(resourceTypeNames, kv["type"])), Name: kv["name"],
			PatternType: ACLPatternType(code(patternTypeNames, kv["pattern"]))},
		Entry: ACLEntry{Principal: kv["principal"], Host: kv["host"], Operation: ACLOperation(code(operationNames, kv["op"])),
			Permission: ACLPermission(code(permissionNames, kv["perm"]))},
	}
}

func writeSecurityDelta(out *strings.Builder, d *Delta) {
	if u := d.ChangedScramUsers(); len(u) > 0 {
		fmt.Fprintf(out, "delta: changed scram users %q\n", u)
	}
	added, removed := d.ChangedACLs()
	for _, b := range added {
		fmt.Fprintf(out, "delta: added acl %s\n", b)
	}
	for _, b := range removed {
		fmt.Fprintf(out, "delta: removed acl %s\n", b)
	}
	for _, e := range d.ChangedQuotaEntities() {
		fmt.Fprintf(out, "delta: changed quotas of %s\n", e)
	}
}

func binding(t ACLResourceType, pattern ACLPatternType, name, principal string, op ACLOperation) ACLBinding {
	return ACLBinding{Resource: ACLResource{Type: t, Name: name, PatternType: pattern},
		Entry: ACLEntry{Principal: principal, Host: "*", Operation: op, Permission: ACLPermissionAllow}}
}

func imageOf(t *testing.T, recs ...Record) *Image {
	t.Helper()
	d := NewDelta(EmptyImage())
	for i, r := range recs {
		if err := d.Replay(int64(i), 1, r); err != nil {
			t.Fatal(err)
		}
	}
	return d.Apply()
}

func matching(im *Image, t ACLResourceType, name string) []string {
	var out []string
	for r, e := range im.MatchingACLs(t, name) {
		out = append(out, fmt.Sprintf("%s:%s:%s", r.PatternType, r.Name, e.Principal))
	}
	return out
}

// TestMatchingACLs: a resource finds its literal bindings, the literal
// wildcard and every prefixed binding whose name starts it, of its own
// type only; an iteration stopped early stops.
func TestMatchingACLs(t *testing.T) {
	im := imageOf(t,
		&AccessControlEntryRecord{Binding: binding(ACLResourceTopic, ACLPatternLiteral, "orders", "User:a", ACLOpRead)},
		&AccessControlEntryRecord{Binding: binding(ACLResourceTopic, ACLPatternLiteral, "orders", "User:b", ACLOpRead)},
		&AccessControlEntryRecord{Binding: binding(ACLResourceTopic, ACLPatternLiteral, "*", "User:c", ACLOpRead)},
		&AccessControlEntryRecord{Binding: binding(ACLResourceTopic, ACLPatternPrefixed, "ord", "User:d", ACLOpRead)},
		&AccessControlEntryRecord{Binding: binding(ACLResourceTopic, ACLPatternPrefixed, "orders", "User:e", ACLOpRead)},
		&AccessControlEntryRecord{Binding: binding(ACLResourceTopic, ACLPatternPrefixed, "ordersX", "User:f", ACLOpRead)},
		&AccessControlEntryRecord{Binding: binding(ACLResourceTopic, ACLPatternPrefixed, "x", "User:g", ACLOpRead)},
		&AccessControlEntryRecord{Binding: binding(ACLResourceGroup, ACLPatternLiteral, "orders", "User:h", ACLOpRead)},
		&AccessControlEntryRecord{Binding: binding(ACLResourceGroup, ACLPatternPrefixed, "o", "User:i", ACLOpRead)},
	)
	for _, tc := range []struct {
		typ  ACLResourceType
		name string
		want []string
	}{
		{ACLResourceTopic, "orders", []string{"LITERAL:orders:User:a", "LITERAL:orders:User:b", "LITERAL:*:User:c", "PREFIXED:ord:User:d", "PREFIXED:orders:User:e"}},
		{ACLResourceTopic, "or", []string{"LITERAL:*:User:c"}},
		{ACLResourceTopic, "*", []string{"LITERAL:*:User:c"}},
		{ACLResourceTopic, "xyz", []string{"LITERAL:*:User:c", "PREFIXED:x:User:g"}},
		{ACLResourceGroup, "orders", []string{"LITERAL:orders:User:h", "PREFIXED:o:User:i"}},
		{ACLResourceCluster, ACLClusterName, nil},
	} {
		if got := matching(im, tc.typ, tc.name); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %q: got %q, want %q", tc.typ, tc.name, got, tc.want)
		}
	}
	n := 0
	for range im.MatchingACLs(ACLResourceTopic, "orders") {
		n++
		if n == 2 {
			break
		}
	}
	if n != 2 {
		t.Fatalf("early break: %d", n)
	}
	if im.ACLCount() != 9 {
		t.Fatalf("count %d", im.ACLCount())
	}
}

// TestACLFilters: filters as Kafka's AclBindingFilter: ANY, MATCH, an exact
// pattern, entry fields; the indexed and the scanned paths agree.
func TestACLFilters(t *testing.T) {
	im := imageOf(t,
		&AccessControlEntryRecord{Binding: binding(ACLResourceTopic, ACLPatternLiteral, "orders", "User:a", ACLOpRead)},
		&AccessControlEntryRecord{Binding: binding(ACLResourceTopic, ACLPatternLiteral, "*", "User:b", ACLOpWrite)},
		&AccessControlEntryRecord{Binding: binding(ACLResourceTopic, ACLPatternPrefixed, "ord", "User:a", ACLOpRead)},
		&AccessControlEntryRecord{Binding: binding(ACLResourceGroup, ACLPatternLiteral, "orders", "User:a", ACLOpRead)},
	)
	str := func(s string) *string { return &s }
	all := AllACLs()
	for _, tc := range []struct {
		name string
		f    func(*ACLFilter)
		want int
	}{
		{"all", func(*ACLFilter) {}, 4},
		{"topics", func(f *ACLFilter) { f.ResourceType = ACLResourceTopic }, 3},
		{"any pattern named orders", func(f *ACLFilter) { f.Name = str("orders") }, 2},
		{"literal orders topic", func(f *ACLFilter) {
			f.ResourceType, f.PatternType, f.Name = ACLResourceTopic, ACLPatternLiteral, str("orders")
		}, 1},
		{"match orders topic", func(f *ACLFilter) {
			f.ResourceType, f.PatternType, f.Name = ACLResourceTopic, ACLPatternMatch, str("orders")
		}, 3},
		{"match any type", func(f *ACLFilter) { f.PatternType, f.Name = ACLPatternMatch, str("orders") }, 4},
		{"prefixed only", func(f *ACLFilter) { f.PatternType = ACLPatternPrefixed }, 1},
		{"principal", func(f *ACLFilter) { f.Principal = str("User:b") }, 1},
		{"operation", func(f *ACLFilter) { f.Operation = ACLOpRead }, 3},
		{"permission deny", func(f *ACLFilter) { f.Permission = ACLPermissionDeny }, 0},
		{"host", func(f *ACLFilter) { f.Host = str("10.0.0.1") }, 0},
		{"unknown type", func(f *ACLFilter) { f.ResourceType = ACLResourceUnknown }, 0},
	} {
		f := all
		tc.f(&f)
		got := im.ACLs(f)
		if len(got) != tc.want {
			t.Errorf("%s: %d bindings %v, want %d", tc.name, len(got), got, tc.want)
		}
		var scanned int
		for _, b := range im.ACLs(all) {
			if f.Matches(b) {
				scanned++
			}
		}
		if scanned != len(got) {
			t.Errorf("%s: index found %d, scan %d", tc.name, len(got), scanned)
		}
	}
}

// TestSecuritySnapshot: credentials (byte for byte), ACLs and quotas
// survive a snapshot, and records after it apply on top.
func TestSecuritySnapshot(t *testing.T) {
	l := NewLoader(slog.New(slog.DiscardHandler))
	recs := []Record{
		&UserScramCredentialRecord{Name: "alice", Mechanism: ScramSHA256, Salt: []byte("s1"), StoredKey: []byte("k1"), ServerKey: []byte("v1"), Iterations: 4096},
		&UserScramCredentialRecord{Name: "alice", Mechanism: ScramSHA512, Salt: []byte("s2"), StoredKey: []byte("k2"), ServerKey: []byte("v2"), Iterations: 8192},
		&UserScramCredentialRecord{Name: "bob", Mechanism: ScramSHA256, Salt: []byte("s3"), StoredKey: []byte("k3"), ServerKey: []byte("v3"), Iterations: 4096},
		&RemoveUserScramCredentialRecord{Name: "bob", Mechanism: ScramSHA256},
		&AccessControlEntryRecord{Binding: binding(ACLResourceTopic, ACLPatternPrefixed, "ord", "User:a", ACLOpRead)},
		&AccessControlEntryRecord{Binding: binding(ACLResourceCluster, ACLPatternLiteral, ACLClusterName, "User:a", ACLOpAlter)},
		&ClientQuotaRecord{Entity: QuotaEntity{User: QuotaName("alice")}, Key: QuotaProducerByteRate, Value: 1024},
		&ClientQuotaRecord{Entity: QuotaEntity{User: QuotaDefault(), ClientID: QuotaName("c1")}, Key: QuotaRequestPercentage, Value: 12.5},
		&ClientQuotaRecord{Entity: QuotaEntity{ClientID: QuotaDefault()}, Key: QuotaConsumerByteRate, Value: 1},
		&ClientQuotaRecord{Entity: QuotaEntity{ClientID: QuotaDefault()}, Key: QuotaConsumerByteRate, Remove: true},
	}
	for i, rec := range recs {
		if err := l.Apply(int64(i), 1, EncodeRecords([]Record{rec})); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	want := l.Image()
	got, err := DecodeSnapshot(want.Offset(), want.Epoch(), l.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Fatalf("snapshot image:\n%s\nwant:\n%s", got, want)
	}
	for _, m := range ScramMechanisms() {
		if !reflect.DeepEqual(got.ScramCredentials("alice")[m], want.ScramCredentials("alice")[m]) {
			t.Fatalf("%s credential differs after the snapshot", m)
		}
	}
	if c, ok := got.ScramCredential("alice", ScramSHA512); !ok || string(c.StoredKey) != "k2" || string(c.ServerKey) != "v2" || string(c.Salt) != "s2" || c.Iterations != 8192 {
		t.Fatalf("alice SHA-512: %+v %v", c, ok)
	}
	if _, ok := got.ScramCredential("bob", ScramSHA256); ok || len(got.ScramUsers()) != 1 {
		t.Fatalf("bob's removed credential is back: %v", got.ScramUsers())
	}
	if v, ok := got.ClientQuota(QuotaEntity{User: QuotaDefault(), ClientID: QuotaName("c1")}, QuotaRequestPercentage); !ok || v != 12.5 {
		t.Fatalf("quota %v %v", v, ok)
	}
	if len(got.QuotaEntities()) != 2 || got.ACLCount() != 2 {
		t.Fatalf("entities %v acls %d", got.QuotaEntities(), got.ACLCount())
	}
	if n := len(matching(got, ACLResourceTopic, "orders")); n != 1 {
		t.Fatalf("prefixed index not rebuilt: %d", n)
	}
}

// TestSecurityReplayRefuses: records that do not fit the image are errors
// and change nothing.
func TestSecurityReplayRefuses(t *testing.T) {
	b := binding(ACLResourceTopic, ACLPatternLiteral, "t", "User:a", ACLOpRead)
	base := imageOf(t,
		&AccessControlEntryRecord{Binding: b},
		&UserScramCredentialRecord{Name: "alice", Mechanism: ScramSHA256, Iterations: 4096},
		&ClientQuotaRecord{Entity: QuotaEntity{User: QuotaName("alice")}, Key: QuotaProducerByteRate, Value: 1},
	)
	bad := b
	bad.Resource.PatternType = ACLPatternMatch
	for _, rec := range []Record{
		&AccessControlEntryRecord{Binding: b},
		&AccessControlEntryRecord{Binding: bad},
		&RemoveAccessControlEntryRecord{Binding: binding(ACLResourceTopic, ACLPatternLiteral, "t", "User:b", ACLOpRead)},
		&UserScramCredentialRecord{Name: "alice", Mechanism: ScramUnknown, Iterations: 4096},
		&UserScramCredentialRecord{Name: "", Mechanism: ScramSHA256, Iterations: 4096},
		&RemoveUserScramCredentialRecord{Name: "alice", Mechanism: ScramSHA512},
		&ClientQuotaRecord{Entity: QuotaEntity{User: QuotaName("bob")}, Key: QuotaProducerByteRate, Remove: true},
		&ClientQuotaRecord{Key: QuotaProducerByteRate, Value: 1},
	} {
		d := NewDelta(base)
		if err := d.Replay(10, 1, rec); !errors.Is(err, ErrInconsistentRecord) {
			t.Errorf("%T %+v: %v", rec, rec, err)
		}
		if !d.IsEmpty() {
			t.Errorf("%T: refused record changed the delta", rec)
		}
	}
	// Adding and removing in one delta cancel out.
	d := NewDelta(base)
	nb := binding(ACLResourceGroup, ACLPatternLiteral, "g", "User:a", ACLOpRead)
	for _, rec := range []Record{&AccessControlEntryRecord{Binding: nb}, &RemoveAccessControlEntryRecord{Binding: nb}} {
		if err := d.Replay(10, 1, rec); err != nil {
			t.Fatal(err)
		}
	}
	if added, removed := d.ChangedACLs(); len(added)+len(removed) != 0 || d.Apply().ACLCount() != 1 {
		t.Fatalf("add then remove: %v %v", added, removed)
	}
}

// TestDecodeQuotaEntityRejects: an unknown or repeated entity type in a
// quota record is corrupt.
func TestDecodeQuotaEntityRejects(t *testing.T) {
	for _, typ := range [][2]string{{"group", ""}, {"user", "user"}} {
		w := &writer{}
		w.int16(int16(TypeClientQuota))
		w.int16(0)
		n := 1
		if typ[1] != "" {
			n = 2
		}
		w.b = append(w.b, byte(n))
		for _, x := range typ[:n] {
			w.string(x)
			w.nullableString(nil)
		}
		w.string("k")
		w.float64(1)
		w.bool(false)
		if _, err := DecodeRecord(w.b); !errors.Is(err, ErrCorruptRecord) {
			t.Errorf("entity %v: %v", typ, err)
		}
	}
}
