package controller

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/metadata"
)

// codedPolicy refuses "restart.*" keys with an error wrapping
// INVALID_REQUEST, as the node's policy refuses a broker key it would not
// apply live, and "bad.*" keys with a plain error.
type codedPolicy struct{ testPolicy }

type requestError struct{ msg string }

func (e requestError) Error() string { return e.msg }
func (e requestError) Unwrap() error { return kerr.InvalidRequest }

func (codedPolicy) Validate(_ metadata.ConfigResource, cfg map[string]string) error {
	for k := range cfg {
		if strings.HasPrefix(k, "restart.") {
			return requestError{"Cannot update these configs dynamically: [" + k + "]"}
		}
		if strings.HasPrefix(k, "bad.") {
			return fmt.Errorf("invalid value for configuration %s", k)
		}
	}
	return nil
}

// TestConfigRefusalCodes: a refused config set answers the code its error
// wraps, INVALID_CONFIG when none, with the policy's message and no record,
// for IncrementalAlterConfigs and AlterConfigs alike.
func TestConfigRefusalCodes(t *testing.T) {
	c := New(Options{Configs: codedPolicy{}})
	im := metadata.EmptyImage()
	for _, tc := range []struct {
		key      string
		code     *kerr.Error
		msg      string
		accepted bool
	}{
		{key: "restart.listeners", code: kerr.InvalidRequest, msg: "Cannot update these configs dynamically: [restart.listeners]"},
		{key: "bad.key", code: kerr.InvalidConfig, msg: "invalid value for configuration bad.key"},
		{key: "log.retention.ms", accepted: true},
	} {
		inc := kmsg.NewPtrIncrementalAlterConfigsRequest()
		inc.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeBroker, ResourceName: "1",
			Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: tc.key, Op: kmsg.IncrementalAlterConfigOpSet, Value: kmsg.StringPtr("1")}}}}
		recs, incResp := c.IncrementalAlterConfigs(im, inc)
		alt := kmsg.NewPtrAlterConfigsRequest()
		alt.Resources = []kmsg.AlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeBroker, ResourceName: "",
			Configs: []kmsg.AlterConfigsRequestResourceConfig{{Name: tc.key, Value: kmsg.StringPtr("1")}}}}
		altRecs, altResp := c.AlterConfigs(im, alt)
		for _, got := range []struct {
			api  string
			recs []metadata.Record
			code int16
			msg  *string
		}{
			{"IncrementalAlterConfigs", recs, incResp.Resources[0].ErrorCode, incResp.Resources[0].ErrorMessage},
			{"AlterConfigs", altRecs, altResp.Resources[0].ErrorCode, altResp.Resources[0].ErrorMessage},
		} {
			if tc.accepted {
				if got.code != 0 || len(got.recs) != 1 {
					t.Errorf("%s %s: code %d, %d records; want accepted with one record", got.api, tc.key, got.code, len(got.recs))
				}
				continue
			}
			if got.code != tc.code.Code || got.msg == nil || *got.msg != tc.msg || len(got.recs) != 0 {
				t.Errorf("%s %s: code %d message %v, %d records; want %s %q and none", got.api, tc.key, got.code, got.msg, len(got.recs), tc.code.Message, tc.msg)
			}
		}
	}
}
