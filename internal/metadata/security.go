package metadata

// The vocabulary of the security records (docs/security.md): SCRAM
// mechanisms, ACL bindings and client quota entities, with Kafka's codes
// and names, so the controller, the handlers, the authorizer and the quota
// manager share one definition.

import (
	"fmt"
	"strings"
)

// ScramMechanism is a SCRAM mechanism with Kafka's type code
// (org.apache.kafka.clients.admin.ScramMechanism).
type ScramMechanism int8

// SCRAM mechanisms.
const (
	ScramUnknown ScramMechanism = 0
	ScramSHA256  ScramMechanism = 1
	ScramSHA512  ScramMechanism = 2
)

// ScramMechanisms lists the mechanisms Kafka defines, in code order.
func ScramMechanisms() []ScramMechanism { return []ScramMechanism{ScramSHA256, ScramSHA512} }

// Known reports whether m is SCRAM-SHA-256 or SCRAM-SHA-512.
func (m ScramMechanism) Known() bool { return m == ScramSHA256 || m == ScramSHA512 }

// String is the SASL mechanism name, e.g. "SCRAM-SHA-256".
func (m ScramMechanism) String() string {
	switch m {
	case ScramSHA256:
		return "SCRAM-SHA-256"
	case ScramSHA512:
		return "SCRAM-SHA-512"
	default:
		return "UNKNOWN"
	}
}

// ScramMechanismByName maps a SASL mechanism name to its mechanism.
func ScramMechanismByName(name string) (ScramMechanism, bool) {
	for _, m := range ScramMechanisms() {
		if m.String() == name {
			return m, true
		}
	}
	return ScramUnknown, false
}

// ScramCredential is what the server keeps of a user's password for one
// mechanism (RFC 5802): the salt, StoredKey = H(HMAC(SaltedPassword,
// "Client Key")), ServerKey = HMAC(SaltedPassword, "Server Key") and the
// iteration count. Read-only once published.
type ScramCredential struct {
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int32
}

// ACLResourceType is Kafka's ResourceType code.
type ACLResourceType int8

// ACL resource types. ANY appears in filters only.
const (
	ACLResourceUnknown         ACLResourceType = 0
	ACLResourceAny             ACLResourceType = 1
	ACLResourceTopic           ACLResourceType = 2
	ACLResourceGroup           ACLResourceType = 3
	ACLResourceCluster         ACLResourceType = 4
	ACLResourceTransactionalID ACLResourceType = 5
	ACLResourceDelegationToken ACLResourceType = 6
	ACLResourceUser            ACLResourceType = 7
)

// ACLPatternType is Kafka's PatternType code: how a binding's resource
// name is understood. ANY and MATCH appear in filters only.
type ACLPatternType int8

// ACL pattern types.
const (
	ACLPatternUnknown  ACLPatternType = 0
	ACLPatternAny      ACLPatternType = 1
	ACLPatternMatch    ACLPatternType = 2
	ACLPatternLiteral  ACLPatternType = 3
	ACLPatternPrefixed ACLPatternType = 4
)

// ACLOperation is Kafka's AclOperation code. ANY appears in filters only.
type ACLOperation int8

// ACL operations.
const (
	ACLOpUnknown         ACLOperation = 0
	ACLOpAny             ACLOperation = 1
	ACLOpAll             ACLOperation = 2
	ACLOpRead            ACLOperation = 3
	ACLOpWrite           ACLOperation = 4
	ACLOpCreate          ACLOperation = 5
	ACLOpDelete          ACLOperation = 6
	ACLOpAlter           ACLOperation = 7
	ACLOpDescribe        ACLOperation = 8
	ACLOpClusterAction   ACLOperation = 9
	ACLOpDescribeConfigs ACLOperation = 10
	ACLOpAlterConfigs    ACLOperation = 11
	ACLOpIdempotentWrite ACLOperation = 12
	ACLOpCreateTokens    ACLOperation = 13
	ACLOpDescribeTokens  ACLOperation = 14
	ACLOpTwoPhaseCommit  ACLOperation = 15
)

// ACLPermission is Kafka's AclPermissionType code. ANY appears in filters
// only.
type ACLPermission int8

// ACL permissions.
const (
	ACLPermissionUnknown ACLPermission = 0
	ACLPermissionAny     ACLPermission = 1
	ACLPermissionDeny    ACLPermission = 2
	ACLPermissionAllow   ACLPermission = 3
)

// ACLWildcard is the literal resource name, principal and host that match
// every name (Kafka's ResourcePattern.WILDCARD_RESOURCE, "User:*" aside).
const ACLWildcard = "*"

// ACLClusterName is the one name of the CLUSTER resource.
const ACLClusterName = "kafka-cluster"

var (
	resourceTypeNames = []string{"UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER"}
	patternTypeNames  = []string{"UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"}
	operationNames    = []string{"UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE",
		"CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS", "TWO_PHASE_COMMIT"}
	permissionNames = []string{"UNKNOWN", "ANY", "DENY", "ALLOW"}
)

func codeName(names []string, code int8) string {
	if code >= 0 && int(code) < len(names) {
		return names[code]
	}
	return "UNKNOWN"
}

// String is Kafka's name of the resource type ("UNKNOWN" for codes it does
// not define, as ResourceType.fromCode does).
func (t ACLResourceType) String() string { return codeName(resourceTypeNames, int8(t)) }

// String is Kafka's name of the pattern type.
func (t ACLPatternType) String() string { return codeName(patternTypeNames, int8(t)) }

// String is Kafka's name of the operation.
func (o ACLOperation) String() string { return codeName(operationNames, int8(o)) }

// String is Kafka's name of the permission.
func (p ACLPermission) String() string { return codeName(permissionNames, int8(p)) }

// Concrete reports whether a binding may hold t: a known type other than
// UNKNOWN and ANY.
func (t ACLResourceType) Concrete() bool { return t >= ACLResourceTopic && t <= ACLResourceUser }

// Concrete reports whether a binding may hold t: LITERAL or PREFIXED.
func (t ACLPatternType) Concrete() bool { return t == ACLPatternLiteral || t == ACLPatternPrefixed }

// Concrete reports whether a binding may hold o: a known operation other
// than UNKNOWN and ANY.
func (o ACLOperation) Concrete() bool { return o >= ACLOpAll && o <= ACLOpTwoPhaseCommit }

// Concrete reports whether a binding may hold p: ALLOW or DENY.
func (p ACLPermission) Concrete() bool { return p == ACLPermissionDeny || p == ACLPermissionAllow }

// ACLResource is a resource pattern (Kafka's ResourcePattern): a resource
// type, a name and how the name is understood.
type ACLResource struct {
	Type        ACLResourceType
	Name        string
	PatternType ACLPatternType
}

// String is Kafka's ResourcePattern.toString.
func (r ACLResource) String() string {
	return fmt.Sprintf("ResourcePattern(resourceType=%s, name=%s, patternType=%s)", r.Type, r.Name, r.PatternType)
}

// ACLEntry is an access control entry (Kafka's AccessControlEntry): who,
// from where, what and whether it is allowed or denied.
type ACLEntry struct {
	Principal  string
	Host       string
	Operation  ACLOperation
	Permission ACLPermission
}

// ACLBinding binds an entry to a resource pattern (Kafka's AclBinding).
// Bindings are compared whole: two equal bindings are one ACL.
type ACLBinding struct {
	Resource ACLResource
	Entry    ACLEntry
}

// String is Kafka's AclBinding.toString.
func (b ACLBinding) String() string {
	return fmt.Sprintf("(pattern=%s, entry=(principal=%s, host=%s, operation=%s, permissionType=%s))",
		b.Resource, b.Entry.Principal, b.Entry.Host, b.Entry.Operation, b.Entry.Permission)
}

// Concrete reports whether every code of the binding is one a stored
// binding may hold.
func (b ACLBinding) Concrete() bool {
	return b.Resource.Type.Concrete() && b.Resource.PatternType.Concrete() &&
		b.Entry.Operation.Concrete() && b.Entry.Permission.Concrete()
}

func compareBindings(a, b ACLBinding) int {
	if c := compareResourcesACL(a.Resource, b.Resource); c != 0 {
		return c
	}
	if c := strings.Compare(a.Entry.Principal, b.Entry.Principal); c != 0 {
		return c
	}
	if c := strings.Compare(a.Entry.Host, b.Entry.Host); c != 0 {
		return c
	}
	if a.Entry.Operation != b.Entry.Operation {
		return int(a.Entry.Operation) - int(b.Entry.Operation)
	}
	return int(a.Entry.Permission) - int(b.Entry.Permission)
}

func compareResourcesACL(a, b ACLResource) int {
	if a.Type != b.Type {
		return int(a.Type) - int(b.Type)
	}
	if a.PatternType != b.PatternType {
		return int(a.PatternType) - int(b.PatternType)
	}
	return strings.Compare(a.Name, b.Name)
}

// ACLFilter selects bindings (Kafka's AclBindingFilter): ANY codes and nil
// strings match everything; PatternType MATCH matches the bindings that
// apply to the named resource (the literal name, the literal wildcard and
// the prefixes of the name).
type ACLFilter struct {
	ResourceType ACLResourceType
	Name         *string
	PatternType  ACLPatternType
	Principal    *string
	Host         *string
	Operation    ACLOperation
	Permission   ACLPermission
}

// Matches reports whether b passes the filter, as Kafka's
// AclBindingFilter.matches.
func (f ACLFilter) Matches(b ACLBinding) bool {
	return f.matchesResource(b.Resource) && f.matchesEntry(b.Entry)
}

func (f ACLFilter) matchesResource(r ACLResource) bool {
	if f.ResourceType != ACLResourceAny && f.ResourceType != r.Type {
		return false
	}
	if f.PatternType != ACLPatternAny && f.PatternType != ACLPatternMatch && f.PatternType != r.PatternType {
		return false
	}
	if f.Name == nil {
		return true
	}
	if f.PatternType == ACLPatternAny || f.PatternType == r.PatternType {
		return *f.Name == r.Name
	}
	switch r.PatternType { // MATCH
	case ACLPatternLiteral:
		return *f.Name == r.Name || r.Name == ACLWildcard
	case ACLPatternPrefixed:
		return strings.HasPrefix(*f.Name, r.Name)
	}
	return false
}

func (f ACLFilter) matchesEntry(e ACLEntry) bool {
	return (f.Principal == nil || *f.Principal == e.Principal) &&
		(f.Host == nil || *f.Host == e.Host) &&
		(f.Operation == ACLOpAny || f.Operation == e.Operation) &&
		(f.Permission == ACLPermissionAny || f.Permission == e.Permission)
}

// Client quota entity types and keys, Kafka's names (ClientQuotaEntity,
// QuotaConfig).
const (
	QuotaEntityUser     = "user"
	QuotaEntityClientID = "client-id"
	QuotaEntityIP       = "ip"

	QuotaProducerByteRate       = "producer_byte_rate"
	QuotaConsumerByteRate       = "consumer_byte_rate"
	QuotaRequestPercentage      = "request_percentage"
	QuotaControllerMutationRate = "controller_mutation_rate"
	QuotaConnectionCreationRate = "connection_creation_rate"
)

// QuotaEntityName is one part of a quota entity: absent, the default
// entity (Kafka's null name) or a name.
type QuotaEntityName struct {
	// Set says the entity has this part.
	Set bool
	// Default is the default entity of the part's type ("<default>" in
	// Kafka's tools); Name is then empty.
	Default bool
	Name    string
}

// QuotaName is the part naming name.
func QuotaName(name string) QuotaEntityName { return QuotaEntityName{Set: true, Name: name} }

// QuotaDefault is the part naming the default entity.
func QuotaDefault() QuotaEntityName { return QuotaEntityName{Set: true, Default: true} }

// Ptr is the part as Kafka's nullable name: nil for the default.
func (n QuotaEntityName) Ptr() *string {
	if n.Default {
		return nil
	}
	s := n.Name
	return &s
}

func (n QuotaEntityName) String() string {
	if n.Default {
		return "null"
	}
	return n.Name
}

// QuotaEntity is a client quota entity (Kafka's ClientQuotaEntity): a user,
// a client id, a user and a client id, or an IP address, each part a name
// or the default. It is comparable, so images key quotas by it.
type QuotaEntity struct {
	User     QuotaEntityName
	ClientID QuotaEntityName
	IP       QuotaEntityName
}

// QuotaEntityPart is one (type, name) pair of an entity, as requests and
// records carry them; Name nil is the default.
type QuotaEntityPart struct {
	Type string
	Name *string
}

// Parts lists the entity's parts in Kafka's order (the iteration order of
// ClientQuotaEntity's map: client-id before user; ip stands alone).
func (e QuotaEntity) Parts() []QuotaEntityPart {
	var out []QuotaEntityPart
	if e.ClientID.Set {
		out = append(out, QuotaEntityPart{Type: QuotaEntityClientID, Name: e.ClientID.Ptr()})
	}
	if e.User.Set {
		out = append(out, QuotaEntityPart{Type: QuotaEntityUser, Name: e.User.Ptr()})
	}
	if e.IP.Set {
		out = append(out, QuotaEntityPart{Type: QuotaEntityIP, Name: e.IP.Ptr()})
	}
	return out
}

// Part returns the part of a type ("user", "client-id", "ip").
func (e QuotaEntity) Part(typ string) (QuotaEntityName, bool) {
	switch typ {
	case QuotaEntityUser:
		return e.User, e.User.Set
	case QuotaEntityClientID:
		return e.ClientID, e.ClientID.Set
	case QuotaEntityIP:
		return e.IP, e.IP.Set
	}
	return QuotaEntityName{}, false
}

// QuotaEntityFromParts builds an entity from (type, name) pairs; an
// unknown or repeated type is an error.
func QuotaEntityFromParts(parts []QuotaEntityPart) (QuotaEntity, error) {
	var e QuotaEntity
	for _, p := range parts {
		n := QuotaDefault()
		if p.Name != nil {
			n = QuotaName(*p.Name)
		}
		var slot *QuotaEntityName
		switch p.Type {
		case QuotaEntityUser:
			slot = &e.User
		case QuotaEntityClientID:
			slot = &e.ClientID
		case QuotaEntityIP:
			slot = &e.IP
		default:
			return QuotaEntity{}, fmt.Errorf("unknown quota entity type %q", p.Type)
		}
		if slot.Set {
			return QuotaEntity{}, fmt.Errorf("quota entity type %q twice", p.Type)
		}
		*slot = n
	}
	return e, nil
}

// IsEmpty reports whether the entity has no part.
func (e QuotaEntity) IsEmpty() bool { return !e.User.Set && !e.ClientID.Set && !e.IP.Set }

// String is Kafka's ClientQuotaEntity.toString, e.g.
// "ClientQuotaEntity(entries={client-id=c1, user=alice})".
func (e QuotaEntity) String() string {
	parts := e.Parts()
	s := make([]string, len(parts))
	for i, p := range parts {
		name := "null"
		if p.Name != nil {
			name = *p.Name
		}
		s[i] = p.Type + "=" + name
	}
	return "ClientQuotaEntity(entries={" + strings.Join(s, ", ") + "})"
}

func compareQuotaNames(a, b QuotaEntityName) int {
	switch {
	case a.Set != b.Set:
		if a.Set {
			return 1
		}
		return -1
	case a.Default != b.Default:
		if a.Default {
			return -1
		}
		return 1
	}
	return strings.Compare(a.Name, b.Name)
}

func compareQuotaEntities(a, b QuotaEntity) int {
	if c := compareQuotaNames(a.User, b.User); c != 0 {
		return c
	}
	if c := compareQuotaNames(a.ClientID, b.ClientID); c != 0 {
		return c
	}
	return compareQuotaNames(a.IP, b.IP)
}
