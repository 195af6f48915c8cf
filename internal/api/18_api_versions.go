package api

// ApiVersions (key 18), versions 0-5: the pinned Kafka release's range.
//
// Behaviour as Kafka 4.4's (checked byte for byte against captures in
// testdata/apiversions): the vector is the pinned release's restricted to the
// keys Sluice serves (see Registry.Advertised); an unserved version gets a v0
// body with UNSUPPORTED_VERSION listing only ApiVersions' own range (KIP-511);
// v3+ client software names and versions failing Kafka's pattern get
// INVALID_REQUEST; v5 (KIP-1242) gets INVALID_REQUEST when only one of
// cluster id and node id is given and REBOOTSTRAP_REQUIRED when they do not
// name this broker; below v4 supported features with minimum level 0 are left
// out; finalized features at level 0 are never listed. The response header is
// always v0 (protocol.ResponseHeaderFlexible).
//
// Deviations: ThrottleMillis is always 0 (no quotas yet). Without a
// FeatureSource in RegistryInfo no finalized features are reported and the
// epoch is -1 (unknown); without a ClusterID there a v5 client's identity
// claim is not checked. Kafka always knows both.

import (
	"context"
	"regexp"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// clientSoftwarePattern is Kafka's rule for ApiVersions v3+ client software
// name and version (ApiVersionsRequest.isValid).
var clientSoftwarePattern = regexp.MustCompile(`^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$`)

// newApiVersionsHandler is added by NewRegistry to every registry: it
// answers from r's vector and identity.
func newApiVersionsHandler(r *Registry) Handler {
	return Handler{
		Key:        18,
		MinVersion: 0,
		MaxVersion: 5,
		Handle: func(_ context.Context, req *Request) Response {
			return Reply(r.apiVersionsResponse(req))
		},
	}
}

func (r *Registry) apiVersionsResponse(req *Request) *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	if req.Body == nil {
		// KIP-511: the client learns our ApiVersions range and retries.
		resp.SetVersion(0)
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		if own, ok := r.served[18]; ok {
			resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: 18, MinVersion: own.Min, MaxVersion: own.Max}}
		}
		return resp
	}
	body, ok := req.Body.(*kmsg.ApiVersionsRequest)
	if !ok {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp
	}
	version := body.GetVersion()
	resp.SetVersion(version)
	if version >= 3 {
		if !clientSoftwarePattern.MatchString(body.ClientSoftwareName) ||
			!clientSoftwarePattern.MatchString(body.ClientSoftwareVersion) {
			resp.ErrorCode = kerr.InvalidRequest.Code
			return resp
		}
		if code := r.checkIdentity(body); code != 0 {
			resp.ErrorCode = code
			return resp
		}
		req.Conn.ClientSoftwareName = body.ClientSoftwareName
		req.Conn.ClientSoftwareVersion = body.ClientSoftwareVersion
	}
	for _, v := range r.advertised {
		resp.ApiKeys = append(resp.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: v.Key, MinVersion: v.Min, MaxVersion: v.Max})
	}
	if version < 3 {
		return resp
	}
	for _, f := range r.release.Supported {
		// Kafka hides zero minimums from pre-v4 clients, which rejected them.
		if version < 4 && f.Min == 0 {
			continue
		}
		resp.SupportedFeatures = append(resp.SupportedFeatures, kmsg.ApiVersionsResponseSupportedFeature{
			Name: f.Name, MinVersion: f.Min, MaxVersion: r.featureLevel(f.Name, f.Max),
		})
	}
	if r.features == nil {
		return resp
	}
	epoch, levels := r.features.FinalizedFeatures()
	resp.FinalizedFeaturesEpoch = epoch
	for _, f := range levels {
		level := r.featureLevel(f.Name, f.Level)
		if level == 0 {
			continue
		}
		resp.FinalizedFeatures = append(resp.FinalizedFeatures, kmsg.ApiVersionsResponseFinalizedFeature{
			Name: f.Name, MinVersionLevel: level, MaxVersionLevel: level,
		})
	}
	return resp
}

// checkIdentity applies KIP-1242: a v5 client names the cluster and node it
// believes it reached, so a connection routed to the wrong broker is caught.
func (r *Registry) checkIdentity(body *kmsg.ApiVersionsRequest) int16 {
	if body.GetVersion() < 5 {
		return 0
	}
	hasCluster, hasNode := body.ClusterID != nil, body.NodeID != -1
	switch {
	case hasCluster != hasNode:
		return kerr.InvalidRequest.Code
	case hasCluster && r.clusterID != "" && (*body.ClusterID != r.clusterID || body.NodeID != r.nodeID):
		return kerr.RebootstrapRequired.Code
	}
	return 0
}
