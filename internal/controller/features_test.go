package controller

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/metadata"
)

func featuresImage(t *testing.T, levels map[string]int16) *metadata.Image {
	t.Helper()
	d := metadata.NewDelta(metadata.EmptyImage())
	off := int64(0)
	for name, l := range levels {
		if err := d.Replay(off, 1, &metadata.FeatureLevelRecord{Name: name, Level: l}); err != nil {
			t.Fatal(err)
		}
		off++
	}
	return d.Apply()
}

// TestUpdateFeatures: Kafka's rules and messages, all or nothing.
func TestUpdateFeatures(t *testing.T) {
	im := featuresImage(t, map[string]int16{"metadata.version": 33, "share.version": 2, "group.version": 1, "kraft.version": 1})
	type upd struct {
		name  string
		level int16
		typ   int8
	}
	cases := []struct {
		updates  []upd
		validate bool
		recs     int
		msg      string
	}{
		{[]upd{{"share.version", 1, 2}}, false, 1, ""},
		{[]upd{{"share.version", 1, 2}}, true, 0, ""},
		{[]upd{{"group.version", 0, 2}, {"share.version", 3, 1}}, false, 0,
			"Invalid update version 3 for feature share.version. Local controller 1 only supports versions 0-2"},
		{[]upd{{"share.version", 1, 1}}, false, 0,
			"Invalid update version 1 for feature share.version. Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade."},
		{[]upd{{"eligible.leader.replicas.version", 1, 1}}, false, 0,
			"Invalid update version 1 for feature eligible.leader.replicas.version. Local controller 1 only supports versions 0-0"},
		{[]upd{{"no.such", 1, 1}}, false, 0, "Invalid update version 1 for feature no.such. Local controller 1 does not support this feature."},
		{[]upd{{"metadata.version", 30, 2}}, false, 0,
			"Unsupported metadata.version downgrade from 33 to 30. Refusing to perform the requested downgrade because it might delete metadata information."},
		{[]upd{{"metadata.version", 30, 3}}, false, 0,
			"Unsupported metadata.version downgrade from 33 to 30. Unsafe metadata downgrade is not supported in this version."},
		{[]upd{{"kraft.version", 1, 1}}, false, 0, ""},
	}
	for i, c := range cases {
		req := kmsg.NewPtrUpdateFeaturesRequest()
		req.Version, req.ValidateOnly = 1, c.validate
		for _, u := range c.updates {
			fu := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
			fu.Feature, fu.MaxVersionLevel, fu.UpgradeType = u.name, u.level, u.typ
			req.FeatureUpdates = append(req.FeatureUpdates, fu)
		}
		recs, resp := UpdateFeatures(im, req, 1)
		msg := ""
		if resp.ErrorMessage != nil {
			msg = *resp.ErrorMessage
		}
		want := c.msg
		if want != "" {
			want = "The update failed for all features since the following feature had an error: " + want
		}
		if len(recs) != c.recs || msg != want || len(resp.Results) != len(c.updates) {
			t.Errorf("case %d: %d records, message %q, %d results; want %d, %q", i, len(recs), msg, len(resp.Results), c.recs, want)
		}
	}
}
