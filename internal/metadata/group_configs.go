package metadata

import (
	"maps"
	"slices"
)

// GroupConfigs returns a copy of a group's dynamic configs (the GROUP
// config resource, KIP-848/KIP-932), nil when it sets none. The group need
// not exist: Kafka configures a group before its first member joins.
func (im *Image) GroupConfigs(group string) map[string]string {
	return maps.Clone(im.configs[ConfigResource{Type: ConfigResourceGroup, Name: group}])
}

// ConfiguredGroups returns the names of the groups with dynamic configs,
// sorted.
func (im *Image) ConfiguredGroups() []string {
	var out []string
	for res, cfg := range im.configs {
		if res.Type == ConfigResourceGroup && len(cfg) > 0 {
			out = append(out, res.Name)
		}
	}
	slices.Sort(out)
	return out
}
