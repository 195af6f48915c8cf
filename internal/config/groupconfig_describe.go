package config

import (
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeGroup describes a group's configs as Kafka 4.4's
// ConfigHelper.createGroupConfigEntry: every non-internal group key, and an
// internal one only when the group sets it, sorted by name (nil or empty
// keys), or the requested keys that are so listed. A key the group sets is
// DYNAMIC_GROUP_CONFIG with its override first among the synonyms; then
// come the broker synonym's layers (dynamic, static, default), or, for a
// key without one, a DEFAULT_CONFIG entry under the group key's own name.
// No key is read-only or sensitive.
func (c *Config) DescribeGroup(overrides map[string]string, keys []string) []ConfigEntry {
	g := c.GroupSettings(overrides)
	var out []ConfigEntry
	for _, k := range groupKeys {
		_, set := overrides[k.Name]
		if k.Internal && !set {
			continue
		}
		if len(keys) > 0 && !slices.Contains(keys, k.Name) {
			continue
		}
		out = append(out, c.describeGroupKey(g, k))
	}
	slices.SortFunc(out, func(a, b ConfigEntry) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func (c *Config) describeGroupKey(g GroupSettings, k GroupKeyDef) ConfigEntry {
	var syns []Synonym
	value, overridden := g.Value(k.Name)
	if overridden {
		syns = append(syns, Synonym{Name: k.Name, Value: ptr(value), Source: kmsg.ConfigSourceGroupConfig})
	}
	if k.Synonym == "" {
		syns = append(syns, Synonym{Name: k.Name, Value: ptr(k.Default), Source: kmsg.ConfigSourceDefaultConfig})
	} else {
		syns = append(syns, c.brokerSynonyms([]string{k.Synonym}, false)...)
	}
	if !overridden {
		value = g.brokerValue(k)
	}
	e := ConfigEntry{
		Name:     k.Name,
		Value:    ptr(value),
		Source:   kmsg.ConfigSourceDefaultConfig,
		Synonyms: syns,
		Type:     kmsg.ConfigType(k.Type),
	}
	if len(syns) > 0 {
		e.Source = syns[0].Source
	}
	if k.Doc != "" {
		e.Documentation = ptr(k.Doc)
	}
	return e
}
