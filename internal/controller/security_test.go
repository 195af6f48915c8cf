package controller

import (
	"bytes"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/metadata"
)

// securityCommand runs the golden files' security commands:
//
//	alter-scram: lines "upsert USER MECH [iterations=N] [salted=S]" and
//	  "delete USER MECH" (MECH 256, 512 or a number)
//	create-acls: lines "TYPE PATTERN NAME PRINCIPAL HOST OP PERM" (Kafka's
//	  names or numeric codes; "" for an empty string)
//	delete-acls: lines of key=value filters (type, name, pattern, principal,
//	  host, op, perm; a missing key is null or ANY)
//	alter-quotas [validate-only]: lines "ENTITY | OP..." where ENTITY is
//	  type=name pairs (<default> for null) and OP is key=value or -key
func securityCommand(c *Controller, im *metadata.Image, d *datadriven.TestData, out *strings.Builder) ([]metadata.Record, bool) {
	switch d.Cmd {
	case "alter-scram":
		recs, resp := c.AlterUserScramCredentials(im, scramRequest(d.Input))
		for _, r := range resp.Results {
			fmt.Fprintf(out, "response: %s %s%s\n", r.User, errName(r.ErrorCode), msgOf(r.ErrorMessage))
		}
		return recs, true
	case "create-acls":
		req := kmsg.NewPtrCreateACLsRequest()
		for _, line := range lines(d.Input) {
			f := strings.Fields(line)
			for i := range f {
				f[i] = strings.Trim(f[i], `"`)
			}
			cr := kmsg.NewCreateACLsRequestCreation()
			cr.ResourceType, cr.ResourcePatternType = kmsg.ACLResourceType(code(f[0])), kmsg.ACLResourcePatternType(code(f[1]))
			cr.ResourceName, cr.Principal, cr.Host = f[2], f[3], f[4]
			cr.Operation, cr.PermissionType = kmsg.ACLOperation(code(f[5])), kmsg.ACLPermissionType(code(f[6]))
			req.Creations = append(req.Creations, cr)
		}
		recs, resp := c.CreateAcls(im, req)
		for i, r := range resp.Results {
			fmt.Fprintf(out, "response: %d %s%s\n", i, errName(r.ErrorCode), msgOf(r.ErrorMessage))
		}
		return recs, true
	case "delete-acls":
		req := kmsg.NewPtrDeleteACLsRequest()
		for _, line := range lines(d.Input) {
			req.Filters = append(req.Filters, deleteFilter(line))
		}
		recs, resp := c.DeleteAcls(im, req)
		for i, r := range resp.Results {
			fmt.Fprintf(out, "response: %d %s%s\n", i, errName(r.ErrorCode), msgOf(r.ErrorMessage))
			for _, m := range r.MatchingACLs {
				fmt.Fprintf(out, "  matched %s %s %q %s %s %s %s\n", metadata.ACLResourceType(m.ResourceType), metadata.ACLPatternType(m.ResourcePatternType),
					m.ResourceName, m.Principal, m.Host, metadata.ACLOperation(m.Operation), metadata.ACLPermission(m.PermissionType))
			}
		}
		return recs, true
	case "alter-quotas":
		req := kmsg.NewPtrAlterClientQuotasRequest()
		req.ValidateOnly = d.HasArg("validate-only")
		for _, line := range lines(d.Input) {
			req.Entries = append(req.Entries, quotaEntry(line))
		}
		recs, resp := c.AlterClientQuotas(im, req)
		for _, e := range resp.Entries {
			var parts []string
			for _, p := range e.Entity {
				name := "<default>"
				if p.Name != nil {
					name = *p.Name
				}
				parts = append(parts, p.Type+"="+name)
			}
			fmt.Fprintf(out, "response: %s %s%s\n", strings.Join(parts, ","), errName(e.ErrorCode), msgOf(e.ErrorMessage))
		}
		return recs, true
	}
	return nil, false
}

func lines(input string) []string {
	var out []string
	for _, l := range strings.Split(input, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// code maps one of Kafka's ACL enum names (any of the four enums) or a
// number to its code.
func code(s string) int8 {
	if n, err := strconv.Atoi(s); err == nil {
		return int8(n)
	}
	if s == "UNKNOWN" {
		return 0
	}
	for _, parse := range []func(string) (int8, bool){
		func(s string) (int8, bool) { v, err := kmsg.ParseACLResourceType(s); return int8(v), err == nil },
		func(s string) (int8, bool) { v, err := kmsg.ParseACLResourcePatternType(s); return int8(v), err == nil },
		func(s string) (int8, bool) { v, err := kmsg.ParseACLOperation(s); return int8(v), err == nil },
		func(s string) (int8, bool) { v, err := kmsg.ParseACLPermissionType(s); return int8(v), err == nil },
	} {
		if v, ok := parse(s); ok {
			return v
		}
	}
	panic("unknown acl code " + s)
}

func mechCode(s string) int8 {
	switch s {
	case "256":
		return int8(metadata.ScramSHA256)
	case "512":
		return int8(metadata.ScramSHA512)
	}
	return int8(atoi(s, 0))
}

func scramRequest(input string) *kmsg.AlterUserSCRAMCredentialsRequest {
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	for _, line := range lines(input) {
		f := strings.Fields(line)
		user := strings.Trim(f[1], `"`)
		if f[0] == "delete" {
			req.Deletions = append(req.Deletions, kmsg.AlterUserSCRAMCredentialsRequestDeletion{Name: user, Mechanism: mechCode(f[2])})
			continue
		}
		_, kv := args("x " + strings.Join(f[3:], " "))
		req.Upsertions = append(req.Upsertions, kmsg.AlterUserSCRAMCredentialsRequestUpsertion{
			Name: user, Mechanism: mechCode(f[2]), Iterations: int32(atoi(kv["iterations"], ScramMinIterations)),
			Salt: []byte("salt-" + user), SaltedPassword: []byte(kv["salted"]),
		})
	}
	return req
}

func deleteFilter(line string) kmsg.DeleteACLsRequestFilter {
	_, kv := args("x " + line)
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	f.Operation, f.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	str := func(k string) *string {
		v, ok := kv[k]
		if !ok {
			return nil
		}
		v = strings.Trim(v, `"`)
		return &v
	}
	f.ResourceName, f.Principal, f.Host = str("name"), str("principal"), str("host")
	if v, ok := kv["type"]; ok {
		f.ResourceType = kmsg.ACLResourceType(code(v))
	}
	if v, ok := kv["pattern"]; ok {
		f.ResourcePatternType = kmsg.ACLResourcePatternType(code(v))
	}
	if v, ok := kv["op"]; ok {
		f.Operation = kmsg.ACLOperation(code(v))
	}
	if v, ok := kv["perm"]; ok {
		f.PermissionType = kmsg.ACLPermissionType(code(v))
	}
	return f
}

func quotaEntry(line string) kmsg.AlterClientQuotasRequestEntry {
	ent, ops, _ := strings.Cut(line, "|")
	e := kmsg.NewAlterClientQuotasRequestEntry()
	for _, p := range strings.Fields(ent) {
		typ, name, _ := strings.Cut(p, "=")
		var n *string
		if name != "<default>" {
			name = strings.Trim(name, `"`)
			n = &name
		}
		e.Entity = append(e.Entity, kmsg.AlterClientQuotasRequestEntryEntity{Type: typ, Name: n})
	}
	for _, op := range strings.Fields(ops) {
		if k, ok := strings.CutPrefix(op, "-"); ok {
			e.Ops = append(e.Ops, kmsg.AlterClientQuotasRequestEntryOp{Key: k, Remove: true})
			continue
		}
		k, v, _ := strings.Cut(op, "=")
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			panic(op)
		}
		e.Ops = append(e.Ops, kmsg.AlterClientQuotasRequestEntryOp{Key: k, Value: f})
	}
	return e
}

func fmtSecurityRecord(r metadata.Record) (string, bool) {
	switch x := r.(type) {
	case *metadata.UserScramCredentialRecord:
		return fmt.Sprintf("scram %q %s iterations=%d salt=%q stored-key=%.8x server-key=%.8x",
			x.Name, x.Mechanism, x.Iterations, x.Salt, x.StoredKey, x.ServerKey), true
	case *metadata.RemoveUserScramCredentialRecord:
		return fmt.Sprintf("remove-scram %q %s", x.Name, x.Mechanism), true
	case *metadata.AccessControlEntryRecord:
		return "acl " + x.Binding.String(), true
	case *metadata.RemoveAccessControlEntryRecord:
		return "remove-acl " + x.Binding.String(), true
	case *metadata.ClientQuotaRecord:
		if x.Remove {
			return fmt.Sprintf("quota %s remove %s", x.Entity, x.Key), true
		}
		return fmt.Sprintf("quota %s %s=%v", x.Entity, x.Key, x.Value), true
	}
	return "", false
}

// TestScramKeysMatchRFC7677: the stored key and server key derived from
// the salted password check the RFC 7677 SCRAM-SHA-256 exchange: the
// server signature is the RFC's, and the client proof opens to a client
// key whose hash is the stored key.
func TestScramKeysMatchRFC7677(t *testing.T) {
	salt, _ := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	salted, err := pbkdf2.Key(sha256.New, "pencil", salt, 4096, sha256.Size)
	if err != nil {
		t.Fatal(err)
	}
	rec := scramRecord(kmsg.AlterUserSCRAMCredentialsRequestUpsertion{Name: "user", Mechanism: 1, Iterations: 4096, Salt: salt, SaltedPassword: salted})
	authMessage := "n=user,r=rOprNGfwEbeRWgbNEkqO," +
		"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096," +
		"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
	mac := func(key []byte) []byte {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(authMessage))
		return m.Sum(nil)
	}
	if got := base64.StdEncoding.EncodeToString(mac(rec.ServerKey)); got != "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=" {
		t.Fatalf("server signature %s", got)
	}
	proof, _ := base64.StdEncoding.DecodeString("dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
	clientKey := mac(rec.StoredKey)
	for i := range clientKey {
		clientKey[i] ^= proof[i]
	}
	if h := sha256.Sum256(clientKey); !bytes.Equal(h[:], rec.StoredKey) {
		t.Fatalf("stored key %s does not open the RFC's client proof", hex.EncodeToString(rec.StoredKey))
	}
	if !bytes.Equal(rec.Salt, salt) || rec.Iterations != 4096 || rec.Mechanism != metadata.ScramSHA256 {
		t.Fatalf("record %+v", rec)
	}
}

// TestQuotaValues: Kafka's checks of a quota value by key type.
func TestQuotaValues(t *testing.T) {
	for _, tc := range []struct {
		key string
		v   float64
		ip  bool
		msg string
	}{
		{key: "producer_byte_rate", v: 1024},
		{key: "producer_byte_rate", v: 1.5, msg: "producer_byte_rate cannot be a fractional value."},
		{key: "producer_byte_rate", v: 1e19, msg: "Proposed value for producer_byte_rate is too large for a LONG."},
		{key: "request_percentage", v: 0.5},
		{key: "controller_mutation_rate", v: 1e300},
		{key: "consumer_byte_rate", v: 0, msg: "Quota consumer_byte_rate must be greater than 0"},
		{key: "consumer_byte_rate", v: -5, msg: "Quota consumer_byte_rate must be greater than 0"},
		{key: "consumer_byte_rate", v: math.Inf(1), msg: "Quota consumer_byte_rate must be a finite number"},
		{key: "request_percentage", v: math.NaN(), msg: "Quota request_percentage must be a finite number"},
		{key: "connection_creation_rate", v: 5, msg: "Invalid configuration key connection_creation_rate"},
		{key: "connection_creation_rate", v: 5, ip: true},
		{key: "connection_creation_rate", v: 3e9, ip: true, msg: "Proposed value for connection_creation_rate is too large for an INT."},
		{key: "producer_byte_rate", v: 5, ip: true, msg: "Invalid configuration key producer_byte_rate"},
	} {
		valid := userClientQuotaKeys
		if tc.ip {
			valid = ipQuotaKeys
		}
		if got := validateQuotaValue(valid, tc.key, tc.v); got != tc.msg {
			t.Errorf("%s=%v (ip %t): %q, want %q", tc.key, tc.v, tc.ip, got, tc.msg)
		}
	}
}

// TestAddresses: the hand-written address checks against forms Kafka
// accepts and refuses.
func TestAddresses(t *testing.T) {
	for s, want := range map[string]bool{
		"10.0.0.1": true, "255.255.255.255": true, "256.0.0.1": false, "1.2.3": false, "1.2.3.4.5": false, "a.b.c.d": false,
		"::": true, "::1": true, "fe80::1:2": true, "2001:db8:0:0:0:0:2:1": true, "2001:db8::2:1": true, "::ffff:10.0.0.1": true,
		"1:2:3:4:5:6:7:8:9": false, "1::2::3": false, "12345::": false, "g::1": false, "": false, "host.example": false,
	} {
		if got := isIPv4(s) || isIPv6(s); got != want {
			t.Errorf("%q: %t, want %t", s, got, want)
		}
	}
	for s, want := range map[string]string{
		"10.0.0.0/8": "", "0.0.0.0/0": "", "10.0.0.1/32": "", "2001:db8::/32": "", "::/0": "",
		"10.0.0.0/33": "Value [33] not in range [0,32]", "300.0.0.0/8": "Value [300] not in range [0,255]",
		"10.0.0/8": "Could not parse [10.0.0/8]", "10.0.0.0/": "Could not parse [10.0.0.0/]",
		"2001:db8::/129": "Could not parse [2001:db8::/129]", "a/b/c": "Could not parse [a/b/c]",
	} {
		got := ""
		if err := validateCIDR(s); err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("%q: %q, want %q", s, got, want)
		}
	}
}

// TestCreateAclsRecordLimit: more bindings than one operation may write
// fail together, as Kafka's bounded record list does.
func TestCreateAclsRecordLimit(t *testing.T) {
	c := New(Options{Configs: testPolicy{}})
	req := kmsg.NewPtrCreateACLsRequest()
	for i := range MaxRecordsPerOperation + 1 {
		cr := kmsg.NewCreateACLsRequestCreation()
		cr.ResourceType, cr.ResourcePatternType, cr.ResourceName = kmsg.ACLResourceTypeTopic, kmsg.ACLResourcePatternTypeLiteral, "t"+strconv.Itoa(i)
		cr.Principal, cr.Host, cr.Operation, cr.PermissionType = "User:a", "*", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
		req.Creations = append(req.Creations, cr)
	}
	recs, resp := c.CreateAcls(metadata.EmptyImage(), req)
	if len(recs) != 0 || resp.Results[0].ErrorCode != kerr.UnknownServerError.Code {
		t.Fatalf("%d records, first code %d", len(recs), resp.Results[0].ErrorCode)
	}
	req.Creations = req.Creations[:MaxRecordsPerOperation]
	if recs, _ = c.CreateAcls(metadata.EmptyImage(), req); len(recs) != MaxRecordsPerOperation {
		t.Fatalf("%d records at the limit", len(recs))
	}
}
