package api

// servedFeatureLevels is the highest level of each feature Sluice serves.
// A feature the pinned Kafka release supports beyond it is advertised only
// up to it and finalized at most at it: share.version and streams.version
// stay at 0 while share groups (KIP-932) and streams groups (KIP-1071) are
// not served; group.version 1 is the KIP-848 consumer group protocol.
var servedFeatureLevels = map[string]int16{
	"group.version":                    1,
	"kraft.version":                    1,
	"metadata.version":                 33,
	"share.version":                    2,
	"streams.version":                  0,
	"transaction.version":              2,
	"eligible.leader.replicas.version": 1,
}

// ServedFeatureLevel caps a feature level at what Sluice serves; a feature
// it does not know is served at no level above 0.
func ServedFeatureLevel(name string, level int16) int16 {
	return min(level, servedFeatureLevels[name])
}

// featureLevel is level as this registry reports it.
func (r *Registry) featureLevel(name string, level int16) int16 {
	if !r.capFeature {
		return level
	}
	return ServedFeatureLevel(name, level)
}
