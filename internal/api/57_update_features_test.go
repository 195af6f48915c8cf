package api

import (
	"testing"

	"github.com/sluice-io/sluice/internal/controller"
)

// TestSupportedFeaturesMatchTheRelease: the controller validates
// UpdateFeatures against the ranges ApiVersions advertises.
func TestSupportedFeaturesMatchTheRelease(t *testing.T) {
	sup := controller.SupportedFeatures()
	rel := PinnedRelease().Supported
	if len(sup) != len(rel) {
		t.Fatalf("controller knows %d features, the release %d", len(sup), len(rel))
	}
	for _, f := range rel {
		want := controller.FeatureRange{Min: f.Min, Max: max(f.Min, ServedFeatureLevel(f.Name, f.Max))}
		if sup[f.Name] != want {
			t.Errorf("%s: controller %v, release (served) %v", f.Name, sup[f.Name], want)
		}
	}
}
