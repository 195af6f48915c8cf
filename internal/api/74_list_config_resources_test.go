package api

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestListConfigResources(t *testing.T) {
	im := quotaImage(t, nil, map[string]int{"b": 1, "a": 2})
	cases := []struct {
		version int16
		types   []int8
		want    string
	}{
		// v0 is KIP-714's ListClientMetricsResources: client metrics only,
		// which Sluice does not keep.
		{0, nil, "0 []"},
		{1, nil, "0 [{a 2} {b 2}]"},
		{1, []int8{configTypeTopic}, "0 [{a 2} {b 2}]"},
		{1, []int8{configTypeGroup, configTypeClientMetrics}, "0 []"},
		{1, []int8{configTypeTopic, 64}, "35 []"},
	}
	for i, c := range cases {
		req := kmsg.NewPtrListConfigResourcesRequest()
		req.Version, req.ResourceTypes = c.version, c.types
		resp := listConfigResources(im, "PLAINTEXT", req)
		got := fmt.Sprint(resp.ErrorCode, " [")
		for j, r := range resp.ConfigResources {
			if j > 0 {
				got += " "
			}
			got += fmt.Sprintf("{%s %d}", r.Name, r.Type)
		}
		got += "]"
		if got != c.want {
			t.Errorf("case %d: got %s, want %s", i, got, c.want)
		}
	}
}
