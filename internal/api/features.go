package api

import "github.com/sluice-io/sluice/internal/controller"

// ServedFeatureLevel caps a feature level at what Sluice serves
// (controller.ServedFeatureLevel, where the controller validates
// UpdateFeatures against the same levels); a feature it does not know is
// served at no level above 0.
func ServedFeatureLevel(name string, level int16) int16 {
	return controller.ServedFeatureLevel(name, level)
}

// featureLevel is level as this registry reports it.
func (r *Registry) featureLevel(name string, level int16) int16 {
	if !r.capFeature {
		return level
	}
	return ServedFeatureLevel(name, level)
}
