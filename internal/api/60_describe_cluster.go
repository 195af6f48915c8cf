package api

// DescribeCluster (key 60), versions 0-2: the pinned Kafka release's range.
//
// Behaviour as Kafka's broker: the cluster id, a live broker as controller id
// (KIP-590), the unfenced brokers (v2: also fenced ones, flagged, when asked)
// with their endpoint for the request's listener; endpoint type 2
// (controllers, KIP-919) is answered UNSUPPORTED_ENDPOINT_TYPE by a broker
// listener, as Kafka does; cluster authorized operations when asked (every
// operation: no authorizer), INT32_MIN otherwise.
//
// Deviations: the controller id choice is 03_metadata.go's.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// endpointTypeBrokers and endpointTypeControllers are KIP-919's values.
const (
	endpointTypeBrokers     int8 = 1
	endpointTypeControllers int8 = 2
)

func newDescribeClusterHandler(_ *Registry, deps Deps) (Handler, bool) {
	if deps.ControlPlane == nil {
		return Handler{}, false
	}
	cp := deps.ControlPlane
	return Handler{
		Key:        60,
		MinVersion: 0,
		MaxVersion: 2,
		Handle: func(_ context.Context, req *Request) Response {
			body := req.Body.(*kmsg.DescribeClusterRequest)
			return Reply(describeCluster(cp, req.Conn.Listener, body))
		},
	}, true
}

func describeCluster(cp ControlPlane, listener string, req *kmsg.DescribeClusterRequest) *kmsg.DescribeClusterResponse {
	resp := kmsg.NewPtrDescribeClusterResponse()
	resp.SetVersion(req.Version)
	resp.EndpointType = endpointTypeBrokers
	if req.Version >= 1 {
		resp.EndpointType = req.EndpointType
	}
	im := cp.Image()
	resp.ClusterID = im.ClusterID()
	resp.ControllerID = liveControllerID(im, cp.NodeID())
	resp.ClusterAuthorizedOperations = authorizedOperationsOmitted
	if req.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = allClusterOperations
	}
	if req.Version >= 1 && req.EndpointType != endpointTypeBrokers {
		resp.ErrorCode = kerr.UnsupportedEndpointType.Code
		if req.EndpointType == endpointTypeControllers {
			resp.ErrorMessage = stringPtr("the request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER")
		}
		return resp
	}
	withFenced := req.Version >= 2 && req.IncludeFencedBrokers
	for _, id := range im.BrokerIDs() {
		b, _ := im.Broker(id)
		ep, ok := brokerEndpoint(b, listener)
		if !ok || (b.Fenced && !withFenced) {
			continue
		}
		rb := kmsg.NewDescribeClusterResponseBroker()
		rb.NodeID, rb.Host, rb.Port, rb.Rack, rb.IsFenced = b.ID, ep.Host, ep.Port, b.Rack, b.Fenced
		resp.Brokers = append(resp.Brokers, rb)
	}
	return resp
}
