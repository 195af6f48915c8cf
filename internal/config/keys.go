// Package config reads a Kafka server.properties file with Kafka's key names, types,
// validators and defaults (taken from Apache Kafka by tools/configgen), applies Sluice's
// documented deviations for a single node, and answers the questions the rest of Sluice asks:
// typed values, listeners, voters, topic configs and DescribeConfigs entries.
//
// config imports nothing of Sluice's storage or server packages; the node package maps the
// values onto each package's own Options.
package config

// KeyType is a Kafka ConfigDef type.
type KeyType int8

// The ConfigDef types, in Kafka's order.
const (
	TypeBoolean KeyType = iota + 1
	TypeString
	TypeInt
	TypeShort
	TypeLong
	TypeDouble
	TypeList
	TypeClass
	TypePassword
)

// String names the type as Kafka's documentation does.
func (t KeyType) String() string {
	switch t {
	case TypeBoolean:
		return "boolean"
	case TypeString:
		return "string"
	case TypeInt:
		return "int"
	case TypeShort:
		return "short"
	case TypeLong:
		return "long"
	case TypeDouble:
		return "double"
	case TypeList:
		return "list"
	case TypeClass:
		return "class"
	case TypePassword:
		return "password"
	}
	return "unknown"
}

// Importance is a key's ConfigDef importance.
type Importance int8

// The ConfigDef importances.
const (
	ImportanceHigh Importance = iota + 1
	ImportanceMedium
	ImportanceLow
)

// String names the importance as Kafka's documentation does.
func (i Importance) String() string {
	switch i {
	case ImportanceHigh:
		return "high"
	case ImportanceMedium:
		return "medium"
	case ImportanceLow:
		return "low"
	}
	return "unknown"
}

// UpdateMode says whether and how a key can change without a restart.
type UpdateMode int8

// Kafka's dynamic update modes. UpdateTopic marks topic keys, which AlterConfigs sets per topic.
const (
	UpdateReadOnly UpdateMode = iota + 1
	UpdatePerBroker
	UpdateClusterWide
	UpdateTopic
)

// String names the mode as Kafka's documentation does.
func (m UpdateMode) String() string {
	switch m {
	case UpdateReadOnly:
		return "read-only"
	case UpdatePerBroker:
		return "per-broker"
	case UpdateClusterWide:
		return "cluster-wide"
	case UpdateTopic:
		return "per-topic"
	}
	return "unknown"
}

// CheckKind is the shape of one Kafka validator.
type CheckKind int8

// Validator shapes. CheckKafkaOnly is a validator with custom logic in Kafka that Sluice does
// not reproduce (only the type is checked); Text says what Kafka accepts.
const (
	CheckRange CheckKind = iota + 1
	CheckOneOf
	CheckOneOfFold
	CheckList
	CheckListMaxSize
	CheckNonEmpty
	CheckNonEmptyNoControlChars
	CheckNonNull
	CheckKafkaOnly
)

// Check is one validator constraint of a key. Min and Max are decimal numbers as Kafka
// printed them; empty means unbounded. For CheckList, Allowed empty means any element,
// NotEmpty refuses an empty list and Unique refuses duplicate or empty elements.
type Check struct {
	Kind     CheckKind
	Min      string
	Max      string
	Allowed  []string
	NotEmpty bool
	Unique   bool
	Text     string
}

// Unit says how a synonym's value converts to the topic key's unit.
type Unit int8

// Synonym conversions Kafka applies.
const (
	UnitSame Unit = iota + 1
	UnitMinutesToMillis
	UnitHoursToMillis
)

// SynonymDef is a broker key that supplies a topic key's default, in Kafka's precedence order.
type SynonymDef struct {
	Name string
	Unit Unit
}

// KeyDef is everything Kafka declares about one configuration key.
type KeyDef struct {
	Name string
	Type KeyType
	// Default is the default rendered as DescribeConfigs renders it; meaningful unless
	// Required or DefaultNull.
	Default     string
	DefaultNull bool
	// Required keys have no default in Kafka (node.id, process.roles); Sluice supplies its own.
	Required   bool
	Importance Importance
	Update     UpdateMode
	// Internal keys are accepted but not listed by DescribeConfigs, as in Kafka.
	Internal bool
	Checks   []Check
	Synonyms []SynonymDef
	Doc      string
}

// Sensitive reports whether values of the key are secret (Kafka's PASSWORD type).
func (d KeyDef) Sensitive() bool { return d.Type == TypePassword }

// BrokerKeys returns Kafka's broker key definitions, sorted by name.
func BrokerKeys() []KeyDef { return brokerKeyDefs() }

// TopicKeys returns Kafka's topic key definitions, sorted by name.
func TopicKeys() []KeyDef { return topicKeyDefs() }

func indexKeys(defs []KeyDef) map[string]KeyDef {
	m := make(map[string]KeyDef, len(defs))
	for _, d := range defs {
		m[d.Name] = d
	}
	return m
}
