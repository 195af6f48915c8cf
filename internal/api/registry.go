package api

import (
	"context"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/protocol"
)

// RegistryInfo is what ApiVersions reports of this node besides the
// vector.
type RegistryInfo struct {
	// ClusterID and NodeID identify this node to ApiVersions v5 clients
	// (KIP-1242); an empty ClusterID means unknown, and then a client's
	// claim of identity is not checked.
	ClusterID string
	NodeID    int32
	// Features reports the cluster's finalized features; nil reports none,
	// with an unknown epoch.
	Features FeatureSource
	// Authorizer decides each request's actions (authorizer.class.name);
	// nil allows everything, as Kafka without an authorizer.
	Authorizer Authorizer
	// CapFeatures advertises and reports features only up to the levels
	// Sluice serves (ServedFeatureLevel); false reports the release's and
	// the cluster's levels as they are (tests imitating Kafka).
	CapFeatures bool
	// ConnClosed is told of every client connection that ends (share
	// sessions end with their connection); nil ignores them.
	ConnClosed func(*ConnState)
}

// FeatureSource reports the finalized KIP-584 features and their epoch (the
// metadata log offset at which they were last changed, as in Kafka).
type FeatureSource interface {
	FinalizedFeatures() (epoch int64, levels []FinalizedFeature)
}

// StaticFeatures is a FeatureSource that never changes.
type StaticFeatures struct {
	Epoch  int64
	Levels []FinalizedFeature
}

// FinalizedFeatures implements FeatureSource.
func (s StaticFeatures) FinalizedFeatures() (int64, []FinalizedFeature) { return s.Epoch, s.Levels }

// Registry routes requests to handlers and knows the advertised versions.
// It is immutable once built and safe for concurrent use.
type Registry struct {
	release    Release
	clusterID  string
	nodeID     int32
	features   FeatureSource
	authz      Authorizer
	capFeature bool
	connClosed func(*ConnState)
	handlers   map[int16]Handler
	advertised []VersionRange
	served     map[int16]VersionRange
}

// NewRegistry builds the registry of one kind of listener: release is the
// vector it advertises (BrokerRelease, ControllerListenerRelease) and
// handlers its handler set (BrokerHandlers, ControllerHandlers); ApiVersions
// is added here, as every listener serves it.
func NewRegistry(release Release, info RegistryInfo, handlers []Handler) (*Registry, error) {
	r := &Registry{
		release:    release,
		clusterID:  info.ClusterID,
		nodeID:     info.NodeID,
		features:   info.Features,
		authz:      info.Authorizer,
		capFeature: info.CapFeatures,
		connClosed: info.ConnClosed,
		handlers:   make(map[int16]Handler),
	}
	for _, h := range append([]Handler{newApiVersionsHandler(r)}, handlers...) {
		if err := r.add(h); err != nil {
			return nil, err
		}
	}
	r.computeAdvertised()
	return r, nil
}

func (r *Registry) add(h Handler) error {
	if h.Handle == nil {
		return fmt.Errorf("api key %d: handler has no Handle func", h.Key)
	}
	if _, dup := r.handlers[h.Key]; dup {
		return fmt.Errorf("api key %d registered twice", h.Key)
	}
	req := kmsg.RequestForKey(h.Key)
	if req == nil {
		return fmt.Errorf("api key %d unknown to kmsg", h.Key)
	}
	if h.MinVersion < 0 || h.MinVersion > h.MaxVersion || h.MaxVersion > req.MaxVersion() {
		return fmt.Errorf("api key %d: versions %d..%d invalid (kmsg decodes up to %d)",
			h.Key, h.MinVersion, h.MaxVersion, req.MaxVersion())
	}
	if !slices.ContainsFunc(r.release.APIs, func(v VersionRange) bool { return v.Key == h.Key }) {
		return fmt.Errorf("api key %d is not in the listener's vector (Kafka %s)", h.Key, r.release.Name)
	}
	r.handlers[h.Key] = h
	return nil
}

// computeAdvertised clips each served key's range to the release's, keeping
// the release's order; a key whose ranges do not overlap is not served.
func (r *Registry) computeAdvertised() {
	r.served = make(map[int16]VersionRange)
	for _, rel := range r.release.APIs {
		h, ok := r.handlers[rel.Key]
		if !ok {
			continue
		}
		v := VersionRange{Key: rel.Key, Min: max(rel.Min, h.MinVersion), Max: min(rel.Max, h.MaxVersion)}
		if v.Min > v.Max {
			continue
		}
		r.advertised = append(r.advertised, v)
		r.served[v.Key] = v
	}
}

// Advertised returns the ApiVersions vector, sorted by key.
func (r *Registry) Advertised() []VersionRange { return slices.Clone(r.advertised) }

// Supported returns the served range of key.
func (r *Registry) Supported(key int16) (VersionRange, bool) {
	v, ok := r.served[key]
	return v, ok
}

// Release returns the imitated Kafka release.
func (r *Registry) Release() Release { return r.release }

// Serve routes one request: it checks the key and version, decodes the body
// and calls the handler. The error, a *protocol.UnknownAPIKeyError,
// *protocol.UnsupportedVersionError or *protocol.MalformedRequestError, means
// the connection must be closed, as Kafka does. An ApiVersions request at an
// unserved version is not an error: it gets the KIP-511 answer.
func (r *Registry) Serve(ctx context.Context, conn *ConnState, h protocol.RequestHeader, body []byte) (Response, error) {
	return r.ServeObserved(ctx, conn, h, body, nil)
}

// ServeObserved is Serve telling obs, when not nil, of the request just
// before its handler runs.
func (r *Registry) ServeObserved(ctx context.Context, conn *ConnState, h protocol.RequestHeader, body []byte, obs ServeObserver) (Response, error) {
	handler, ok := r.handlers[h.APIKey]
	served, servedOK := r.served[h.APIKey]
	if !ok || !servedOK {
		return Response{}, &protocol.UnknownAPIKeyError{Key: h.APIKey, CorrelationID: h.CorrelationID}
	}
	req := &Request{Header: h, Conn: conn, authz: r.authz}
	if h.APIVersion < served.Min || h.APIVersion > served.Max {
		if h.APIKey != protocol.ApiVersionsKey {
			return Response{}, &protocol.UnsupportedVersionError{
				Key: h.APIKey, Version: h.APIVersion, Min: served.Min, Max: served.Max,
			}
		}
		return handle(ctx, handler, req, obs), nil
	}
	decoded, err := protocol.DecodeRequestBody(h, body)
	if err != nil {
		return Response{}, err
	}
	req.Body = decoded
	return handle(ctx, handler, req, obs), nil
}

// ConnClosed tells the registry's owner that the connection c ended.
func (r *Registry) ConnClosed(c *ConnState) {
	if r.connClosed != nil {
		r.connClosed(c)
	}
}
