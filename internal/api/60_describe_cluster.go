package api

// DescribeCluster (key 60), versions 0-2: the pinned Kafka release's range.
//
// Behaviour as Kafka's broker: the cluster id, a live broker as controller id
// (KIP-590), the unfenced brokers (v2: also fenced ones, flagged, when asked)
// with their endpoint for the request's listener; endpoint type 2
// (controllers, KIP-919) is answered UNSUPPORTED_ENDPOINT_TYPE by a broker
// listener, as Kafka does; cluster authorized operations when asked (those
// the principal may perform, 0 without DESCRIBE on the cluster; every one
// without an authorizer), INT32_MIN otherwise.
//
// Behaviour as Kafka's controller (KIP-919, `--bootstrap-controller`), on a
// CONTROLLER listener (newDescribeControllersHandler): endpoint type 2 is
// answered with the voters' endpoints on that listener and the quorum
// leader as controller id (-1 while there is none); type 1 (and v0, which
// means type 1) is UNSUPPORTED_ENDPOINT_TYPE.
//
// Deviations: the broker listener's controller id choice is 03_metadata.go's;
// the controllers' endpoints come from controller.quorum.voters (Kafka reads
// them from the controllers' registrations, which Sluice does not keep), so
// a controller is listed whether or not it is running.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/metadata"
)

// endpointTypeBrokers and endpointTypeControllers are KIP-919's values.
const (
	endpointTypeBrokers     int8 = 1
	endpointTypeControllers int8 = 2
)

// newDescribeClusterHandler serves DescribeCluster on broker listeners: the
// brokers, with this node (node.id in cfg) as controller id when it is live.
func newDescribeClusterHandler(cfg *config.Config, view MetadataView) Handler {
	return Handler{
		Key:        60,
		MinVersion: 0,
		MaxVersion: 2,
		Handle: func(_ context.Context, req *Request) Response {
			body := req.Body.(*kmsg.DescribeClusterRequest)
			return Reply(withClusterOperations(req, describeCluster(cfg.NodeID(), view, req.Conn.Listener, body)))
		},
	}
}

// newDescribeControllersHandler serves DescribeCluster on CONTROLLER
// listeners: the controllers, from dir.
func newDescribeControllersHandler(view MetadataView, dir ControllerDirectory) Handler {
	return Handler{
		Key:        60,
		MinVersion: 0,
		MaxVersion: 2,
		Handle: func(_ context.Context, req *Request) Response {
			body := req.Body.(*kmsg.DescribeClusterRequest)
			return Reply(withClusterOperations(req, describeControllers(view, dir, req.Conn.Listener, body)))
		},
	}
}

// ControllerDirectory lists the controllers for DescribeCluster on a
// CONTROLLER listener.
type ControllerDirectory interface {
	// Controllers returns the quorum leader (-1: none known) and every
	// voter's endpoint on the listener, in node id order.
	Controllers(listener string) (leader int32, endpoints []ControllerEndpoint)
}

// ControllerEndpoint is one controller's address on a listener.
type ControllerEndpoint struct {
	NodeID int32
	Host   string
	Port   int32
}

// withClusterOperations sets the cluster authorized operations a request
// asked for as Kafka's AuthHelper.computeDescribeClusterResponse: those
// the principal may perform with DESCRIBE on the cluster, else 0.
func withClusterOperations(req *Request, resp *kmsg.DescribeClusterResponse) *kmsg.DescribeClusterResponse {
	if resp.ClusterAuthorizedOperations != allClusterOperations {
		return resp // not asked, or an endpoint type refused
	}
	if !req.authorizeCluster(opDescribe) {
		resp.ClusterAuthorizedOperations = 0
		return resp
	}
	resp.ClusterAuthorizedOperations = req.authorizedOperations(resCluster, clusterName, allClusterOperations)
	return resp
}

// describeClusterResponse is the part of the answer both listeners share.
func describeClusterResponse(im *metadata.Image, req *kmsg.DescribeClusterRequest) *kmsg.DescribeClusterResponse {
	resp := kmsg.NewPtrDescribeClusterResponse()
	resp.SetVersion(req.Version)
	resp.EndpointType = endpointTypeBrokers
	if req.Version >= 1 {
		resp.EndpointType = req.EndpointType
	}
	resp.ClusterID = im.ClusterID()
	resp.ClusterAuthorizedOperations = authorizedOperationsOmitted
	if req.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = allClusterOperations
	}
	return resp
}

func describeCluster(self int32, view MetadataView, listener string, req *kmsg.DescribeClusterRequest) *kmsg.DescribeClusterResponse {
	im := view.Image()
	resp := describeClusterResponse(im, req)
	resp.ControllerID = liveControllerID(im, self)
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

// describeControllers answers on a CONTROLLER listener, as Kafka's
// controller does: only endpoint type 2 is served there.
func describeControllers(view MetadataView, dir ControllerDirectory, listener string, req *kmsg.DescribeClusterRequest) *kmsg.DescribeClusterResponse {
	resp := describeClusterResponse(view.Image(), req)
	leader, endpoints := dir.Controllers(listener)
	resp.ControllerID = leader
	if resp.EndpointType != endpointTypeControllers {
		resp.ErrorCode = kerr.UnsupportedEndpointType.Code
		resp.ErrorMessage = stringPtr("the request was sent to an endpoint of type CONTROLLER, but we wanted an endpoint of type BROKER")
		resp.ControllerID = -1
		return resp
	}
	for _, ep := range endpoints {
		rb := kmsg.NewDescribeClusterResponseBroker()
		rb.NodeID, rb.Host, rb.Port = ep.NodeID, ep.Host, ep.Port
		resp.Brokers = append(resp.Brokers, rb)
	}
	return resp
}
