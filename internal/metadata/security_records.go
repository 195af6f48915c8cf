package metadata

// The records of SCRAM credentials, ACLs and client quotas
// (docs/metadata-records.md). Their type numbers are Kafka's.

import (
	"encoding/binary"
)

// Record types of the security records.
const (
	TypeUserScramCredential       RecordType = 11
	TypeClientQuota               RecordType = 14
	TypeAccessControlEntry        RecordType = 18
	TypeRemoveAccessControlEntry  RecordType = 19
	TypeRemoveUserScramCredential RecordType = 22
)

// UserScramCredentialRecord sets a user's credential for one mechanism
// (creating it or replacing the previous one).
type UserScramCredentialRecord struct {
	Name       string
	Mechanism  ScramMechanism
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int32
}

// RemoveUserScramCredentialRecord removes a user's credential for one
// mechanism; it must exist.
type RemoveUserScramCredentialRecord struct {
	Name      string
	Mechanism ScramMechanism
}

// AccessControlEntryRecord adds an ACL binding; an equal binding must not
// exist. Kafka's record carries an id; Sluice names an ACL by its binding,
// which Kafka keeps unique too.
type AccessControlEntryRecord struct {
	Binding ACLBinding
}

// RemoveAccessControlEntryRecord removes an ACL binding; it must exist.
type RemoveAccessControlEntryRecord struct {
	Binding ACLBinding
}

// ClientQuotaRecord sets (Remove false) or removes one quota key of an
// entity. Value is ignored when removing.
type ClientQuotaRecord struct {
	Entity QuotaEntity
	Key    string
	Value  float64
	Remove bool
}

func (*UserScramCredentialRecord) Type() RecordType       { return TypeUserScramCredential }
func (*RemoveUserScramCredentialRecord) Type() RecordType { return TypeRemoveUserScramCredential }
func (*AccessControlEntryRecord) Type() RecordType        { return TypeAccessControlEntry }
func (*RemoveAccessControlEntryRecord) Type() RecordType  { return TypeRemoveAccessControlEntry }
func (*ClientQuotaRecord) Type() RecordType               { return TypeClientQuota }

func (*UserScramCredentialRecord) Version() int16       { return 0 }
func (*RemoveUserScramCredentialRecord) Version() int16 { return 0 }
func (*AccessControlEntryRecord) Version() int16        { return 0 }
func (*RemoveAccessControlEntryRecord) Version() int16  { return 0 }
func (*ClientQuotaRecord) Version() int16               { return 0 }

func (x *UserScramCredentialRecord) encode(w *writer) {
	w.string(x.Name)
	w.int8(int8(x.Mechanism))
	w.bytes(x.Salt)
	w.bytes(x.StoredKey)
	w.bytes(x.ServerKey)
	w.int32(x.Iterations)
}

func (x *UserScramCredentialRecord) decode(r *reader) {
	x.Name = r.string()
	x.Mechanism = ScramMechanism(r.int8())
	x.Salt = r.bytes()
	x.StoredKey = r.bytes()
	x.ServerKey = r.bytes()
	x.Iterations = r.int32()
}

func (x *RemoveUserScramCredentialRecord) encode(w *writer) {
	w.string(x.Name)
	w.int8(int8(x.Mechanism))
}

func (x *RemoveUserScramCredentialRecord) decode(r *reader) {
	x.Name = r.string()
	x.Mechanism = ScramMechanism(r.int8())
}

func encodeBinding(w *writer, b ACLBinding) {
	w.int8(int8(b.Resource.Type))
	w.string(b.Resource.Name)
	w.int8(int8(b.Resource.PatternType))
	w.string(b.Entry.Principal)
	w.string(b.Entry.Host)
	w.int8(int8(b.Entry.Operation))
	w.int8(int8(b.Entry.Permission))
}

func decodeBinding(r *reader) ACLBinding {
	var b ACLBinding
	b.Resource.Type = ACLResourceType(r.int8())
	b.Resource.Name = r.string()
	b.Resource.PatternType = ACLPatternType(r.int8())
	b.Entry.Principal = r.string()
	b.Entry.Host = r.string()
	b.Entry.Operation = ACLOperation(r.int8())
	b.Entry.Permission = ACLPermission(r.int8())
	return b
}

func (x *AccessControlEntryRecord) encode(w *writer)       { encodeBinding(w, x.Binding) }
func (x *AccessControlEntryRecord) decode(r *reader)       { x.Binding = decodeBinding(r) }
func (x *RemoveAccessControlEntryRecord) encode(w *writer) { encodeBinding(w, x.Binding) }
func (x *RemoveAccessControlEntryRecord) decode(r *reader) { x.Binding = decodeBinding(r) }

func (x *ClientQuotaRecord) encode(w *writer) {
	parts := x.Entity.Parts()
	w.b = binary.AppendUvarint(w.b, uint64(len(parts)))
	for _, p := range parts {
		w.string(p.Type)
		w.nullableString(p.Name)
	}
	w.string(x.Key)
	w.float64(x.Value)
	w.bool(x.Remove)
}

func (x *ClientQuotaRecord) decode(r *reader) {
	n := r.length("quota entity")
	// Each part takes at least two bytes, which bounds a corrupt count.
	if r.err == nil && n > len(r.b)/2 {
		r.fail("quota entity")
	}
	parts := make([]QuotaEntityPart, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		parts = append(parts, QuotaEntityPart{Type: r.string(), Name: r.nullableString()})
	}
	if r.err == nil {
		e, err := QuotaEntityFromParts(parts)
		if err != nil {
			r.fail("quota entity (" + err.Error() + ")")
		}
		x.Entity = e
	}
	x.Key = r.string()
	x.Value = r.float64()
	x.Remove = r.bool()
}

// newSecurityRecord returns an empty record of a security type, or nil.
func newSecurityRecord(t RecordType) Record {
	switch t {
	case TypeUserScramCredential:
		return &UserScramCredentialRecord{}
	case TypeRemoveUserScramCredential:
		return &RemoveUserScramCredentialRecord{}
	case TypeAccessControlEntry:
		return &AccessControlEntryRecord{}
	case TypeRemoveAccessControlEntry:
		return &RemoveAccessControlEntryRecord{}
	case TypeClientQuota:
		return &ClientQuotaRecord{}
	}
	return nil
}

// securityDecoder is implemented by the security records: all at version
// 0, each decodes its own fields.
type securityDecoder interface{ decode(r *reader) }
