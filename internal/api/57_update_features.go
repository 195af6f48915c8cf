package api

// UpdateFeatures (key 57), versions 0-2: the pinned Kafka release's range
// (kafka-features upgrade, downgrade, disable, --dry-run).
//
// Behaviour as Kafka's: ALTER on the cluster or CLUSTER_AUTHORIZATION_FAILED;
// the request goes to the active controller, which validates every update
// (controller.UpdateFeatures: the supported ranges, downgrade rules,
// dependencies) and writes FeatureLevelRecords, all or nothing; the
// response carries one error for the whole request, and below v2 the same
// error for each feature asked for.

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/controller"
)

// FeatureUpdater finalizes feature levels on the active controller
// (*broker.ControllerChannel).
type FeatureUpdater interface {
	UpdateFeatures(ctx context.Context, req *kmsg.UpdateFeaturesRequest) (*kmsg.UpdateFeaturesResponse, error)
}

// newUpdateFeaturesHandler serves UpdateFeatures through admin, which
// implements FeatureUpdater (*broker.ControllerChannel); controller
// mutation quotas do not apply to it, as in Kafka. An admin that cannot
// finalize features answers NOT_CONTROLLER.
func newUpdateFeaturesHandler(admin AdminController) Handler {
	if q, ok := admin.(mutationQuotaAdmin); ok {
		admin = q.AdminController
	}
	fu, _ := admin.(FeatureUpdater)
	return Handler{
		Key:        57,
		MinVersion: 0,
		MaxVersion: 2,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.UpdateFeaturesRequest)
			var resp *kmsg.UpdateFeaturesResponse
			err := req.clusterRefusal(opAlter)
			if err == nil && fu == nil {
				err = fmt.Errorf("update features: %w", controller.ErrNotController)
			}
			if err == nil {
				resp, err = fu.UpdateFeatures(ctx, body)
			}
			if err != nil {
				resp = failedUpdateFeatures(body, ControllerErrorCode(err), errorMessage(err))
			}
			resp.SetVersion(body.Version)
			return Reply(resp)
		},
	}
}

// failedUpdateFeatures answers every feature asked for with code.
func failedUpdateFeatures(req *kmsg.UpdateFeaturesRequest, code int16, msg *string) *kmsg.UpdateFeaturesResponse {
	resp := kmsg.NewPtrUpdateFeaturesResponse()
	resp.ErrorCode, resp.ErrorMessage = code, msg
	if req.Version >= 2 {
		return resp
	}
	for _, u := range req.FeatureUpdates {
		r := kmsg.NewUpdateFeaturesResponseResult()
		r.Feature, r.ErrorCode, r.ErrorMessage = u.Feature, code, msg
		resp.Results = append(resp.Results, r)
	}
	return resp
}
