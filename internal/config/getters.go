package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The typed getters read Kafka keys from a Config (broker keys) or a TopicConfig (topic keys).
// Values were validated when the configuration was built, so they cannot fail on user input.
// They take the typed key values of keys_gen.go, so a key Kafka does not define, or one read
// with the wrong type, does not compile; the panics below can only come from a generator bug
// (keys_test.go resolves every generated key to rule that out).
// A numeric key with no value (Kafka's null default, e.g. log.retention.minutes) reads -1;
// IsSet tells the two apart.

// valueSource is what the getters read: key definitions and effective values.
type valueSource interface {
	definition(key string) (KeyDef, bool)
	resolved(key string) (string, bool)
}

func (c *Config) definition(key string) (KeyDef, bool) {
	d, ok := c.brokerDefs[key]
	return d, ok
}

// Bool returns a boolean broker key.
func (c *Config) Bool(k BoolKey) bool { return getBool(c, k.name) }

// Int returns an int or short broker key.
func (c *Config) Int(k IntKey) int32 { return int32(getInteger(c, k.name, 32, TypeInt, TypeShort)) }

// Long returns a long broker key.
func (c *Config) Long(k LongKey) int64 {
	return getInteger(c, k.name, 64, TypeLong, TypeInt, TypeShort)
}

// Double returns a double broker key.
func (c *Config) Double(k DoubleKey) float64 { return getDouble(c, k.name) }

// Duration returns a long broker key whose name ends in .ms. Negative values (Kafka's "no
// limit", e.g. log.retention.ms=-1) come back negative.
func (c *Config) Duration(keyMs LongKey) time.Duration { return getDuration(c, keyMs.name) }

// String returns a string broker key ("" when it has no value).
func (c *Config) String(k StringKey) string { return getString(c, k.name) }

// Class returns a class broker key ("" when it has no value).
func (c *Config) Class(k ClassKey) string { return getString(c, k.name) }

// Password returns a password broker key ("" when it has no value). It is secret: keep it
// out of logs.
func (c *Config) Password(k PasswordKey) string { return getString(c, k.name) }

// List returns a list broker key split as Kafka splits it.
func (c *Config) List(k ListKey) []string { return splitList(getTyped(c, k.name, TypeList)) }

// IsSet reports whether a broker key has a value (Kafka's null defaults have none).
func (c *Config) IsSet(k Key) bool {
	_, ok := c.resolved(k.Name())
	return ok
}

// Raw returns a key's effective value as written, and whether it has one. Unlike the typed
// getters it also reads Sluice's own keys, which Kafka's table does not define.
func (c *Config) Raw(k Key) (string, bool) { return c.resolved(k.Name()) }

func getBool(src valueSource, key string) bool {
	v, ok := parseBool(getTyped(src, key, TypeBoolean))
	if !ok {
		panic(fmt.Sprintf("config: %s is not a boolean", key))
	}
	return v
}

func getDouble(src valueSource, key string) float64 {
	raw := strings.TrimRight(strings.TrimSpace(getTyped(src, key, TypeDouble)), "dDfF")
	f, err := strconv.ParseFloat(raw, 64)
	if err != nil {
		panic(fmt.Sprintf("config: %s: %v", key, err))
	}
	return f
}

func getDuration(src valueSource, keyMs string) time.Duration {
	if !strings.HasSuffix(keyMs, ".ms") {
		panic(fmt.Sprintf("config: Duration(%s): key is not in milliseconds", keyMs))
	}
	return time.Duration(getInteger(src, keyMs, 64, TypeLong, TypeInt)) * time.Millisecond
}

func getString(src valueSource, key string) string {
	return strings.TrimSpace(getTyped(src, key, TypeString, TypeClass, TypePassword))
}

func getTyped(src valueSource, key string, types ...KeyType) string {
	d, ok := src.definition(key)
	if !ok {
		panic(fmt.Sprintf("config: %s is not a Kafka configuration key here", key))
	}
	for _, t := range types {
		if d.Type == t {
			v, _ := src.resolved(key)
			return v
		}
	}
	panic(fmt.Sprintf("config: %s has type %s", key, d.Type))
}

func getInteger(src valueSource, key string, bits int, types ...KeyType) int64 {
	raw := strings.TrimSpace(getTyped(src, key, types...))
	if raw == "" {
		return -1
	}
	n, err := strconv.ParseInt(raw, 10, bits)
	if err != nil {
		panic(fmt.Sprintf("config: %s: %v", key, err))
	}
	return n
}
