package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// namedKey is what every generated key value has, broker or topic.
type namedKey interface{ Name() string }

// TestGeneratedKeysResolve reads every generated key value with its own getter, from the
// broker's defaults and from a topic with no overrides: each must name a key of its table
// with the type the getter reads, so no getter can panic on a generated key.
func TestGeneratedKeysResolve(t *testing.T) {
	c := Defaults()
	topic, err := c.ResolveTopic(nil)
	if err != nil {
		t.Fatal(err)
	}
	keys := generatedKeys()
	if want := len(BrokerKeys()) + len(TopicKeys()); len(keys) != want {
		t.Fatalf("%d generated keys, the tables hold %d", len(keys), want)
	}
	seen := map[string]bool{}
	for _, k := range keys {
		id := fmt.Sprintf("%T %s", k, k.Name())
		if seen[id] {
			t.Errorf("%s generated twice", id)
		}
		seen[id] = true
		if err := readKey(c, topic, k); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
}

func readKey(c *Config, topic TopicConfig, k namedKey) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("getter panicked: %v", r)
		}
	}()
	switch k := k.(type) {
	case BoolKey:
		c.Bool(k)
	case IntKey:
		c.Int(k)
	case LongKey:
		c.Long(k)
	case DoubleKey:
		c.Double(k)
	case StringKey:
		c.String(k)
	case ListKey:
		c.List(k)
	case ClassKey:
		c.Class(k)
	case PasswordKey:
		c.Password(k)
	case TopicBoolKey:
		topic.Bool(k)
	case TopicIntKey:
		topic.Int(k)
	case TopicLongKey:
		topic.Long(k)
	case TopicDoubleKey:
		topic.Double(k)
	case TopicStringKey:
		topic.String(k)
	case TopicListKey:
		topic.List(k)
	default:
		return fmt.Errorf("no getter for %T", k)
	}
	return checkKind(c, k)
}

// checkKind asks the table itself: a getter also accepts a wider Kafka type (Long reads an
// int), so the key's type must be exactly the one its Go type stands for.
func checkKind(c *Config, k namedKey) error {
	kinds := map[string][]KeyType{
		"BoolKey": {TypeBoolean}, "IntKey": {TypeInt, TypeShort}, "LongKey": {TypeLong},
		"DoubleKey": {TypeDouble}, "StringKey": {TypeString}, "ListKey": {TypeList},
		"ClassKey": {TypeClass}, "PasswordKey": {TypePassword},
	}
	defs, goType := c.brokerDefs, strings.TrimPrefix(fmt.Sprintf("%T", k), "config.")
	if rest, ok := strings.CutPrefix(goType, "Topic"); ok {
		defs, goType = c.topicDefs, rest
	}
	d, ok := defs[k.Name()]
	if !ok {
		return errors.New("not in its table")
	}
	for _, t := range kinds[goType] {
		if d.Type == t {
			return nil
		}
	}
	return fmt.Errorf("Kafka type %s", d.Type)
}

// TestSluiceKeysAreNotKafkas: Sluice's own keys must not shadow a Kafka key.
func TestSluiceKeysAreNotKafkas(t *testing.T) {
	c := Defaults()
	for _, k := range []SluiceKey{SluiceDebugListener, SluiceDebugListenerUsers, SluiceMetricsListener, SluiceMetricsListenerUsers,
		SluiceLogFormat, SluiceLogLevel, SluiceDecompressionMaxInflightBytes} {
		if _, ok := c.brokerDefs[k.Name()]; ok {
			t.Errorf("%s is a Kafka broker key; use its generated value", k.Name())
		}
	}
}
