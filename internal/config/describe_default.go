package config

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeBrokerDefault describes the cluster-wide dynamic default (the BROKER resource named
// ""), as Kafka 4.4 answers it: only the keys set as the default, each with the default's
// value (not this broker's effective one: a per-broker value does not hide it) and, as
// synonyms, only the DYNAMIC_DEFAULT_BROKER_CONFIG entries of its synonym group from the key
// itself on (kafka-configs --entity-default --describe shows
// synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:message.max.bytes=1024} and no DEFAULT_CONFIG).
// keys nil lists every key set; otherwise only those named.
func (c *Config) DescribeBrokerDefault(keys []string) []ConfigEntry {
	var out []ConfigEntry
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range c.dynDefault {
			if !yield(k) {
				return
			}
		}
	}) {
		if keys != nil && !slices.Contains(keys, name) {
			continue
		}
		d, known := c.brokerDefs[name]
		if !known {
			continue // CheckBrokerUpdate refuses keys Kafka does not define
		}
		group := []string{name}
		if g := c.groups[name]; len(g) > 0 {
			group = synonymNames(g)
		}
		var syns []Synonym
		for _, s := range c.brokerSynonyms(group, d.Sensitive()) {
			if s.Source == kmsg.ConfigSourceDynamicDefaultBrokerConfig {
				syns = append(syns, s)
			}
		}
		for len(syns) > 0 && syns[0].Name != name {
			syns = syns[1:]
		}
		e := ConfigEntry{Name: name, Source: kmsg.ConfigSourceDynamicDefaultBrokerConfig, ReadOnly: d.Update == UpdateReadOnly,
			Sensitive: d.Sensitive(), Synonyms: syns, Type: kmsg.ConfigType(d.Type)}
		if !d.Sensitive() {
			e.Value = ptr(render(d, c.dynDefault[name]))
		}
		if d.Doc != "" {
			e.Documentation = ptr(d.Doc)
		}
		out = append(out, e)
	}
	return out
}
