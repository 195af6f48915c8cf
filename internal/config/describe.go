package config

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Synonym is one source a config value could come from, highest precedence first.
type Synonym struct {
	Name   string
	Value  *string // nil for sensitive keys
	Source kmsg.ConfigSource
}

// ConfigEntry is one DescribeConfigs result entry (v0..v4). Callers drop Synonyms and
// Documentation when the request did not ask for them.
type ConfigEntry struct {
	Name          string
	Value         *string // nil when unset or sensitive
	Source        kmsg.ConfigSource
	ReadOnly      bool
	Sensitive     bool
	Synonyms      []Synonym
	Type          kmsg.ConfigType
	Documentation *string
}

// IsDefault is DescribeConfigs v0's flag: the value is Kafka's (or Sluice's) default.
func (e ConfigEntry) IsDefault() bool { return e.Source == kmsg.ConfigSourceDefaultConfig }

// DescribeBroker describes this broker's keys (nil or empty keys: every non-internal key, the
// full default set Kafka returns for a BROKER resource, plus the keys the file set that Kafka
// does not define, reported as Kafka reports them).
func (c *Config) DescribeBroker(keys []string) []ConfigEntry {
	var out []ConfigEntry
	for _, d := range selectDefs(c.brokerDefs, c.unknownKeys, keys) {
		if _, known := c.brokerDefs[d.Name]; !known {
			out = append(out, c.describeUnknownKey(d.Name))
			continue
		}
		group := []string{d.Name}
		if g := c.groups[d.Name]; len(g) > 0 {
			group = synonymNames(g)
		}
		syns := c.brokerSynonyms(group, d.Sensitive())
		// Kafka lists only this key and the synonyms after it (log.retention.hours does not
		// show log.retention.ms), by dropping entries until the key itself.
		for len(syns) > 0 && syns[0].Name != d.Name {
			syns = syns[1:]
		}
		e := ConfigEntry{
			Name:      d.Name,
			Source:    kmsg.ConfigSourceDefaultConfig,
			ReadOnly:  d.Update == UpdateReadOnly,
			Sensitive: d.Sensitive(),
			Synonyms:  syns,
			Type:      kmsg.ConfigType(d.Type),
		}
		if v, _, ok := c.lookup(d.Name); ok && !d.Sensitive() {
			e.Value = ptr(render(d, v))
		}
		if len(syns) > 0 {
			e.Source = syns[0].Source
		}
		if d.Doc != "" {
			e.Documentation = ptr(d.Doc)
		}
		out = append(out, e)
	}
	return out
}

// describeUnknownKey reports a key Kafka does not define as Kafka does: its type is unknown,
// so it may be secret; sensitive, read-only, value hidden.
func (c *Config) describeUnknownKey(name string) ConfigEntry {
	return ConfigEntry{
		Name:      name,
		Source:    kmsg.ConfigSourceStaticBrokerConfig,
		ReadOnly:  true,
		Sensitive: true,
		Synonyms:  []Synonym{{Name: name, Source: kmsg.ConfigSourceStaticBrokerConfig}},
		Type:      kmsg.ConfigTypeUnknown,
	}
}

// DescribeTopic describes a topic whose stored configs are overrides (nil or empty keys: every
// non-internal topic key).
func (c *Config) DescribeTopic(overrides map[string]string, keys []string) []ConfigEntry {
	t := newTopicConfig(c, overrides)
	var out []ConfigEntry
	for _, d := range selectDefs(c.topicDefs, nil, keys) {
		var syns []Synonym
		if v, ok := overrides[d.Name]; ok {
			syns = append(syns, Synonym{Name: d.Name, Value: ptr(render(d, v)), Source: kmsg.ConfigSourceDynamicTopicConfig})
		}
		names := synonymNames(d.Synonyms)
		broker := c.brokerSynonyms(names, d.Sensitive())
		// As for brokers, Kafka drops entries until the first synonym itself: retention.ms
		// lists log.retention.ms entries only, never log.retention.hours.
		for len(broker) > 0 && broker[0].Name != names[0] {
			broker = broker[1:]
		}
		syns = append(syns, broker...)
		e := ConfigEntry{
			Name:      d.Name,
			Source:    kmsg.ConfigSourceDefaultConfig,
			Sensitive: d.Sensitive(),
			Synonyms:  syns,
			Type:      kmsg.ConfigType(d.Type),
		}
		if v, ok := t.resolved(d.Name); ok && !d.Sensitive() {
			e.Value = ptr(render(d, v))
		}
		if len(syns) > 0 {
			e.Source = syns[0].Source
		}
		if d.Doc != "" {
			e.Documentation = ptr(d.Doc)
		}
		out = append(out, e)
	}
	return out
}

// brokerSynonyms lists where the broker keys names get values, layer by layer (dynamic
// broker, dynamic default, static, default) and in synonym order within a layer, as Kafka.
func (c *Config) brokerSynonyms(names []string, sensitive bool) []Synonym {
	var out []Synonym
	for _, l := range c.layers() {
		for _, n := range names {
			v, ok := l.values[n]
			if !ok {
				continue
			}
			// Kafka shows each synonym as written, only the entry's own value is normalised.
			s := Synonym{Name: n, Source: l.source}
			if _, known := c.brokerDefs[n]; known && !sensitive {
				s.Value = ptr(v)
			}
			out = append(out, s)
		}
	}
	return out
}

func synonymNames(s []SynonymDef) []string {
	out := make([]string, len(s))
	for i, d := range s {
		out[i] = d.Name
	}
	return out
}

// selectDefs returns the requested definitions in request order, or every non-internal one
// and every extra name sorted by name when keys is empty. Extra names (keys Kafka does not
// define but the configuration holds) come back as a KeyDef with only the name.
func selectDefs(defs map[string]KeyDef, extra []string, keys []string) []KeyDef {
	var out []KeyDef
	if len(keys) == 0 {
		names := slices.Collect(maps.Keys(defs))
		names = append(names, extra...)
		slices.Sort(names)
		for _, name := range names {
			d, known := defs[name]
			if !known {
				d = KeyDef{Name: name}
			}
			if !d.Internal {
				out = append(out, d)
			}
		}
		return out
	}
	for _, k := range keys {
		if d, ok := defs[k]; ok {
			out = append(out, d)
		} else if slices.Contains(extra, k) {
			out = append(out, KeyDef{Name: k})
		}
	}
	return out
}

// render prints a validated value the way Kafka's ConfigDef.convertToString prints the
// parsed value, so "+5", " true " and "a , b" come back as 5, true and a,b.
func render(d KeyDef, raw string) string {
	trimmed := strings.TrimSpace(raw)
	switch d.Type {
	case TypeBoolean:
		if b, ok := parseBool(raw); ok {
			return strconv.FormatBool(b)
		}
	case TypeInt, TypeShort, TypeLong:
		if n, err := strconv.ParseInt(trimmed, 10, 64); err == nil {
			return strconv.FormatInt(n, 10)
		}
	case TypeDouble:
		if f, err := strconv.ParseFloat(strings.TrimRight(trimmed, "dDfF"), 64); err == nil {
			return javaDouble(f)
		}
	case TypeList:
		return strings.Join(splitList(raw), ",")
	case TypePassword:
		return raw
	case TypeString, TypeClass:
	}
	return trimmed
}

// javaDouble formats f as Java's Double.toString: at least one decimal, scientific notation
// outside [1e-3, 1e7).
func javaDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	abs := math.Abs(f)
	if f == 0 || (abs >= 1e-3 && abs < 1e7) {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, 64), "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	n, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(n)
}

func ptr(s string) *string { return &s }
