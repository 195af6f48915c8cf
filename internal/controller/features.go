package controller

// UpdateFeatures as Kafka 4.4's FeatureControlManager.updateFeatures: every
// update is checked against the levels this release supports (every node of
// a Sluice cluster runs the same binary, so the local range is every
// broker's and controller's), against downgrade rules and against the
// features' dependencies; the first failure fails the whole request and
// nothing is written (all or nothing, as Kafka). Success writes one
// FeatureLevelRecord per update (level 0 removes the feature), unless the
// request only validates.

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/metadata"
)

// FeatureRange is a supported range of feature levels.
type FeatureRange struct{ Min, Max int16 }

// String is Kafka's VersionRange.toString.
func (r FeatureRange) String() string { return fmt.Sprintf("%d-%d", r.Min, r.Max) }

// kafkaSupportedFeatures are the pinned Kafka release's supported ranges
// (api.PinnedRelease().Supported; a test in internal/api keeps them equal).
var kafkaSupportedFeatures = map[string]FeatureRange{
	"group.version":                    {0, 1},
	"kraft.version":                    {0, 1},
	metadata.MetadataVersionFeature:    {7, 33},
	"share.version":                    {0, 2},
	"streams.version":                  {0, 1},
	"transaction.version":              {0, 2},
	"eligible.leader.replicas.version": {0, 1},
}

// servedFeatureLevels is the highest level of each feature Sluice serves: a
// feature is advertised and finalized only up to it. streams.version stays
// at 0 while streams groups (KIP-1071) are not served, and
// eligible.leader.replicas.version while ELR (KIP-966) is not kept.
var servedFeatureLevels = map[string]int16{
	"group.version":                    1,
	"kraft.version":                    1,
	metadata.MetadataVersionFeature:    33,
	"share.version":                    2,
	"streams.version":                  0,
	"transaction.version":              2,
	"eligible.leader.replicas.version": 0,
}

// ServedFeatureLevel caps a level at what Sluice serves; a feature it does
// not know is served at no level above 0.
func ServedFeatureLevel(name string, level int16) int16 {
	return min(level, servedFeatureLevels[name])
}

// SupportedFeatures are the ranges this node supports: Kafka's, capped at
// the served levels.
func SupportedFeatures() map[string]FeatureRange {
	out := make(map[string]FeatureRange, len(kafkaSupportedFeatures))
	for name, r := range kafkaSupportedFeatures {
		out[name] = FeatureRange{Min: r.Min, Max: max(r.Min, ServedFeatureLevel(name, r.Max))}
	}
	return out
}

// elrMetadataVersion is IBP_4_0_IV1, which eligible.leader.replicas.version
// 1 depends on.
const elrMetadataVersion = 23

// Kafka's FeatureUpdate.UpgradeType.
const (
	upgradeTypeUpgrade        int8 = 1
	upgradeTypeSafeDowngrade  int8 = 2
	upgradeTypeUnsafeDowngrad int8 = 3
)

// UpdateFeatures computes the records and response of an UpdateFeatures
// request on image im; nodeID names the local controller in messages.
func UpdateFeatures(im *metadata.Image, req *kmsg.UpdateFeaturesRequest, nodeID int32) ([]metadata.Record, *kmsg.UpdateFeaturesResponse) {
	proposed := im.Features()
	var recs []metadata.Record
	code, msg := int16(0), ""
	for _, u := range req.FeatureUpdates {
		upgradeType := u.UpgradeType
		if req.Version == 0 {
			upgradeType = upgradeTypeUpgrade
			if u.AllowDowngrade {
				upgradeType = upgradeTypeSafeDowngrade
			}
		}
		rec, err := updateFeature(proposed, u.Feature, u.MaxVersionLevel, upgradeType, nodeID)
		if err != "" {
			code, recs = kerr.InvalidUpdateVersion.Code, nil
			msg = "The update failed for all features since the following feature had an error: " + err
			break
		}
		if rec != nil {
			recs = append(recs, rec)
			proposed[u.Feature] = u.MaxVersionLevel
		}
	}
	if req.ValidateOnly {
		recs = nil
	}
	return recs, updateFeaturesResponse(req, code, msg)
}

// updateFeature is FeatureControlManager.updateFeature: the record, or the
// INVALID_UPDATE_VERSION message.
func updateFeature(proposed map[string]int16, name string, level int16, upgradeType int8, nodeID int32) (metadata.Record, string) {
	invalid := func(why string) string {
		return fmt.Sprintf("Invalid update version %d for feature %s. %s", level, name, why)
	}
	if upgradeType < upgradeTypeUpgrade || upgradeType > upgradeTypeUnsafeDowngrad {
		return nil, invalid("The controller does not support the given upgrade type.")
	}
	current := proposed[name]
	if level < 0 {
		return nil, invalid("A feature version cannot be less than 0.")
	}
	if why := reasonNotSupported(name, level, nodeID); why != "" {
		return nil, invalid(why)
	}
	if level < current && upgradeType == upgradeTypeUpgrade {
		return nil, invalid("Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade.")
	}
	if level > current && upgradeType != upgradeTypeUpgrade {
		return nil, invalid("Can't downgrade to a newer version.")
	}
	switch name {
	case metadata.MetadataVersionFeature:
		return updateMetadataVersion(proposed, current, level, upgradeType == upgradeTypeUnsafeDowngrad)
	case "kraft.version":
		// Changing kraft.version is a quorum membership change (KIP-853),
		// not a FeatureLevelRecord; only its current level is accepted.
		if level != current {
			return nil, invalid("Can't downgrade the version of this feature.")
		}
		return nil, ""
	}
	if name == "eligible.leader.replicas.version" && level >= 1 && proposed[metadata.MetadataVersionFeature] < elrMetadataVersion {
		return nil, invalid(fmt.Sprintf("%s could not be set to %d because it depends on metadata.version=%d (%s)",
			name, level, elrMetadataVersion, "4.0-IV1"))
	}
	return &metadata.FeatureLevelRecord{Name: name, Level: level}, ""
}

// reasonNotSupported is QuorumFeatures.reasonNotLocallySupported: a Sluice
// node supports what its binary serves.
func reasonNotSupported(name string, level int16, nodeID int32) string {
	r, ok := SupportedFeatures()[name]
	what := fmt.Sprintf("Local controller %d", nodeID)
	switch {
	case !ok && level > 0:
		return what + " does not support this feature."
	case ok && (level < r.Min || level > r.Max) && !(level == 0 && r.Min == 0):
		return fmt.Sprintf("%s only supports versions %s", what, r)
	}
	return ""
}

// updateMetadataVersion is FeatureControlManager.updateMetadataVersion:
// upgrades within the supported range; every downgrade is refused, as
// Kafka 4.4 refuses those that might delete metadata (Sluice does not
// track which metadata versions changed the records, so it refuses all).
func updateMetadataVersion(proposed map[string]int16, current, level int16, unsafe bool) (metadata.Record, string) {
	if level < current {
		invalid := func(why string) string {
			return fmt.Sprintf("Unsupported metadata.version downgrade from %d to %d. %s", current, level, why)
		}
		if unsafe {
			return nil, invalid("Unsafe metadata downgrade is not supported in this version.")
		}
		return nil, invalid("Refusing to perform the requested downgrade because it might delete metadata information.")
	}
	if level < elrMetadataVersion && proposed["eligible.leader.replicas.version"] >= 1 {
		return nil, fmt.Sprintf("Invalid metadata.version %d. eligible.leader.replicas.version depends on a newer metadata.version.", level)
	}
	return &metadata.FeatureLevelRecord{Name: metadata.MetadataVersionFeature, Level: level}, ""
}

// updateFeaturesResponse is UpdateFeaturesResponse.createWithErrors: the
// top-level error, and below v2 the same error for every feature asked for.
func updateFeaturesResponse(req *kmsg.UpdateFeaturesRequest, code int16, msg string) *kmsg.UpdateFeaturesResponse {
	resp := kmsg.NewPtrUpdateFeaturesResponse()
	resp.SetVersion(req.Version)
	resp.ErrorCode = code
	if code != 0 {
		resp.ErrorMessage = &msg
	}
	if req.Version >= 2 {
		return resp
	}
	var seen []string
	for _, u := range req.FeatureUpdates {
		if slices.Contains(seen, u.Feature) {
			continue
		}
		seen = append(seen, u.Feature)
		r := kmsg.NewUpdateFeaturesResponseResult()
		r.Feature, r.ErrorCode = u.Feature, code
		if code != 0 {
			m := msg
			r.ErrorMessage = &m
		}
		resp.Results = append(resp.Results, r)
	}
	return resp
}
