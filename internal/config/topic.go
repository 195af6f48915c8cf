package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// InvalidTopicConfigError is a topic config Kafka would refuse with INVALID_CONFIG; the
// message names the key and is meant for the response's error message.
type InvalidTopicConfigError struct{ Msg string }

func (e *InvalidTopicConfigError) Error() string { return e.Msg }

// Unwrap lets errors.Is(err, kerr.InvalidConfig) pick the response's error code.
func (e *InvalidTopicConfigError) Unwrap() error { return kerr.InvalidConfig }

// TopicConfig is one topic's effective configuration: its overrides (as stored in the
// metadata log) over the broker's synonyms over Kafka's topic defaults.
//
// It is one pointer, so passing it to the typed getters as their valueSource
// interface does not allocate (a larger struct was boxed on every Int or
// Long, several times per produce append).
type TopicConfig struct{ *topicValues }

type topicValues struct {
	broker    *Config
	overrides map[string]string
	memo      *topicMemo // every key's effective value; nil until withMemo
}

func newTopicConfig(broker *Config, overrides map[string]string) TopicConfig {
	return TopicConfig{&topicValues{broker: broker, overrides: overrides}}
}

// withMemo resolves every key of t in advance (topic_memo.go).
func (t TopicConfig) withMemo() TopicConfig {
	t.memo = newTopicMemo(t)
	return t
}

// ResolveTopic validates a CreateTopics or AlterConfigs config set and returns the topic's
// effective configuration. Errors are *InvalidTopicConfigError (joined when several keys
// are wrong) and match kerr.InvalidConfig with errors.Is.
func (c *Config) ResolveTopic(overrides map[string]string) (TopicConfig, error) {
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(overrides)) {
		d, ok := c.topicDefs[k]
		if !ok {
			errs = append(errs, &InvalidTopicConfigError{Msg: "unknown topic config name: " + k})
			continue
		}
		if err := validateValue(d, overrides[k]); err != nil {
			errs = append(errs, &InvalidTopicConfigError{Msg: err.Error()})
		}
	}
	if len(errs) > 0 {
		return TopicConfig{}, errors.Join(errs...)
	}
	t := newTopicConfig(c, maps.Clone(overrides))
	if t.overrides == nil {
		t.overrides = map[string]string{}
	}
	if err := t.checkCombinations(); err != nil {
		return TopicConfig{}, err
	}
	return t.withMemo(), nil
}

// checkCombinations applies LogConfig's cross-key rules that matter without remote storage.
func (t TopicConfig) checkCombinations() error {
	minLag, maxLag := t.Long(TopicMinCompactionLagMs), t.Long(TopicMaxCompactionLagMs)
	if minLag > maxLag {
		return &InvalidTopicConfigError{Msg: fmt.Sprintf(
			"conflict: min.compaction.lag.ms %d is above max.compaction.lag.ms %d", minLag, maxLag)}
	}
	return nil
}

// Overrides returns a copy of the topic's own configs.
func (t TopicConfig) Overrides() map[string]string {
	if t.topicValues == nil {
		return nil
	}
	return maps.Clone(t.overrides)
}

func (t TopicConfig) definition(key string) (KeyDef, bool) {
	d, ok := t.broker.topicDefs[key]
	return d, ok
}

// resolved: the override, else the first broker synonym with a value (converted), else the
// topic key's own default.
func (t TopicConfig) resolved(key string) (string, bool) {
	if t.memo != nil {
		if v, ok := t.memo.values[key]; ok {
			return v.raw, v.ok
		}
	}
	return t.resolveUncached(key)
}

func (t TopicConfig) resolveUncached(key string) (string, bool) {
	if v, ok := t.overrides[key]; ok {
		return v, true
	}
	d, ok := t.broker.topicDefs[key]
	if !ok {
		return "", false
	}
	for _, s := range d.Synonyms {
		if v, _, ok := t.broker.lookup(s.Name); ok {
			return convertUnit(v, s.Unit), true
		}
	}
	if d.Required || d.DefaultNull {
		return "", false
	}
	return d.Default, true
}

// Bool returns a boolean topic key.
func (t TopicConfig) Bool(k TopicBoolKey) bool { return getBool(t, k.name) }

// Int returns an int or short topic key.
func (t TopicConfig) Int(k TopicIntKey) int32 {
	return int32(getInteger(t, k.name, 32, TypeInt, TypeShort))
}

// Long returns a long topic key.
func (t TopicConfig) Long(k TopicLongKey) int64 {
	return getInteger(t, k.name, 64, TypeLong, TypeInt, TypeShort)
}

// Double returns a double topic key.
func (t TopicConfig) Double(k TopicDoubleKey) float64 { return getDouble(t, k.name) }

// Duration returns a long topic key whose name ends in .ms; negative means no limit.
func (t TopicConfig) Duration(keyMs TopicLongKey) time.Duration { return getDuration(t, keyMs.name) }

// String returns a string topic key.
func (t TopicConfig) String(k TopicStringKey) string { return getString(t, k.name) }

// List returns a list topic key.
func (t TopicConfig) List(k TopicListKey) []string { return splitList(getTyped(t, k.name, TypeList)) }

// Compacted reports whether cleanup.policy contains compact.
func (t TopicConfig) Compacted() bool { return slices.Contains(t.List(TopicCleanupPolicy), "compact") }
