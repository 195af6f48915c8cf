package api

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/protocol"
)

func fakeHandler(key, minV, maxV int16) Handler {
	return Handler{Key: key, MinVersion: minV, MaxVersion: maxV, Handle: func(context.Context, *Request) Response {
		return NoResponse()
	}}
}

func newTestRegistry(t *testing.T, features FeatureSource, extra ...Handler) *Registry {
	t.Helper()
	r, err := NewRegistry(BrokerRelease(), RegistryInfo{Features: features}, extra)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// serveApiVersions encodes a request like a client, parses it like the
// server, and decodes the answer like a client.
func serveApiVersions(t *testing.T, r *Registry, version int16, name, softwareVersion string) (*kmsg.ApiVersionsResponse, *ConnState) {
	t.Helper()
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(version)
	req.ClientSoftwareName = name
	req.ClientSoftwareVersion = softwareVersion
	wire := kmsg.NewRequestFormatter(kmsg.FormatterClientID("test")).AppendRequest(nil, req, 5)
	h, body, err := protocol.ParseRequestHeader(wire[4:])
	if err != nil {
		t.Fatal(err)
	}
	conn := &ConnState{Listener: "PLAINTEXT"}
	resp, err := r.Serve(context.Background(), conn, h, body)
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Valid() || resp.Body() == nil {
		t.Fatalf("ApiVersions must answer with a kmsg body")
	}
	encoded := resp.Body().AppendTo(nil)
	decoded := kmsg.NewPtrApiVersionsResponse()
	decoded.SetVersion(resp.Body().GetVersion())
	if err := decoded.ReadFrom(encoded); err != nil {
		t.Fatalf("decoding our own answer: %v", err)
	}
	return decoded, conn
}

func TestAdvertisedIsReleaseVectorClippedToHandlers(t *testing.T) {
	r := newTestRegistry(t, nil, fakeHandler(3, 0, 12), fakeHandler(1, 0, 13), fakeHandler(0, 3, 13))
	want := []VersionRange{{Key: 0, Min: 3, Max: 13}, {Key: 1, Min: 4, Max: 13}, {Key: 3, Min: 0, Max: 12}, {Key: 18, Min: 0, Max: 5}}
	if got := r.Advertised(); !reflect.DeepEqual(got, want) {
		t.Fatalf("advertised %+v, want %+v", got, want)
	}
}

func TestRegistryRejectsBadHandlers(t *testing.T) {
	for name, h := range map[string]Handler{
		"duplicate":         fakeHandler(18, 0, 5),
		"not in release":    fakeHandler(4, 0, 1), // LeaderAndIsr: not on a KRaft broker listener
		"above kmsg":        fakeHandler(3, 0, 99),
		"inverted":          fakeHandler(3, 5, 4),
		"unknown key":       fakeHandler(999, 0, 0),
		"missing handle fn": {Key: 3, MinVersion: 0, MaxVersion: 1},
	} {
		if _, err := NewRegistry(BrokerRelease(), RegistryInfo{}, []Handler{h}); err == nil {
			t.Errorf("%s: NewRegistry accepted %+v", name, h)
		}
	}
}

func TestApiVersionsEveryVersion(t *testing.T) {
	features := StaticFeatures{Epoch: 17, Levels: PinnedRelease().Finalized}
	r := newTestRegistry(t, features, fakeHandler(3, 0, 13))
	for v := int16(0); v <= 5; v++ {
		got, conn := serveApiVersions(t, r, v, "sluice-test", "1.0")
		want := kmsg.NewPtrApiVersionsResponse()
		want.SetVersion(v)
		want.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: 3, MinVersion: 0, MaxVersion: 13}, {ApiKey: 18, MinVersion: 0, MaxVersion: 5}}
		if v >= 3 {
			want.SupportedFeatures = []kmsg.ApiVersionsResponseSupportedFeature{{Name: "metadata.version", MinVersion: 7, MaxVersion: 33}}
			if v >= 4 {
				want.SupportedFeatures = nil
				for _, f := range PinnedRelease().Supported {
					want.SupportedFeatures = append(want.SupportedFeatures, kmsg.ApiVersionsResponseSupportedFeature{Name: f.Name, MinVersion: f.Min, MaxVersion: f.Max})
				}
			}
			want.FinalizedFeaturesEpoch = 17
			for _, f := range PinnedRelease().Finalized {
				if f.Level > 0 {
					want.FinalizedFeatures = append(want.FinalizedFeatures, kmsg.ApiVersionsResponseFinalizedFeature{Name: f.Name, MinVersionLevel: f.Level, MaxVersionLevel: f.Level})
				}
			}
			if conn.ClientSoftwareName != "sluice-test" || conn.ClientSoftwareVersion != "1.0" {
				t.Errorf("v%d: conn state %+v, want client software recorded", v, conn)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("v%d:\n got %+v\nwant %+v", v, got, want)
		}
	}
}

func TestApiVersionsUnsupportedVersionKIP511(t *testing.T) {
	r := newTestRegistry(t, nil)
	got, _ := serveApiVersions(t, r, 127, "x", "y")
	if got.GetVersion() != 0 || got.ErrorCode != kerr.UnsupportedVersion.Code ||
		!reflect.DeepEqual(got.ApiKeys, []kmsg.ApiVersionsResponseApiKey{{ApiKey: 18, MinVersion: 0, MaxVersion: 5}}) {
		t.Fatalf("KIP-511 answer %+v", got)
	}
}

func TestApiVersionsInvalidClientSoftware(t *testing.T) {
	r := newTestRegistry(t, nil)
	for _, name := range []string{"", "-lead", "trail.", "bad name"} {
		got, conn := serveApiVersions(t, r, 3, name, "1.0")
		if got.ErrorCode != kerr.InvalidRequest.Code || len(got.ApiKeys) != 0 || conn.ClientSoftwareName != "" {
			t.Errorf("name %q: answer %+v", name, got)
		}
	}
}

func TestServeRejects(t *testing.T) {
	r := newTestRegistry(t, nil, fakeHandler(3, 4, 12))
	ctx := context.Background()
	conn := &ConnState{}
	var unknown *protocol.UnknownAPIKeyError
	if _, err := r.Serve(ctx, conn, protocol.RequestHeader{APIKey: 19, APIVersion: 5}, nil); !errors.As(err, &unknown) {
		t.Errorf("unregistered key: err %v", err)
	}
	var unsupported *protocol.UnsupportedVersionError
	if _, err := r.Serve(ctx, conn, protocol.RequestHeader{APIKey: 3, APIVersion: 13}, nil); !errors.As(err, &unsupported) ||
		unsupported.Min != 4 || unsupported.Max != 12 {
		t.Errorf("unsupported version: err %v", err)
	}
	var malformed *protocol.MalformedRequestError
	if _, err := r.Serve(ctx, conn, protocol.RequestHeader{APIKey: 3, APIVersion: 12, Flexible: true}, []byte{9, 9, 9}); !errors.As(err, &malformed) {
		t.Errorf("malformed body: err %v", err)
	}
	metadata := kmsg.NewPtrMetadataRequest()
	metadata.SetVersion(4)
	resp, err := r.Serve(ctx, conn, protocol.RequestHeader{APIKey: 3, APIVersion: 4}, metadata.AppendTo(nil))
	if err != nil || !resp.IsNoResponse() {
		t.Errorf("served request: %+v, %v", resp, err)
	}
}

func TestPinnedReleaseIsWellFormed(t *testing.T) {
	rel := PinnedRelease()
	for i, v := range rel.APIs {
		if i > 0 && rel.APIs[i-1].Key >= v.Key {
			t.Errorf("APIs not sorted at key %d", v.Key)
		}
		req := kmsg.RequestForKey(v.Key)
		if req == nil || v.Max > req.MaxVersion() || v.Min > v.Max {
			t.Errorf("key %d range %d..%d not decodable by kmsg", v.Key, v.Min, v.Max)
		}
	}
}

// A registry that caps features advertises streams.version at 0 (KIP-1071
// is not served) and does not report it finalized, whatever the cluster's
// levels; share.version (KIP-932, served) goes up to the pinned release's 2.
func TestApiVersionsCapsUnservedFeatures(t *testing.T) {
	features := StaticFeatures{Epoch: 17, Levels: PinnedRelease().Finalized}
	r, err := NewRegistry(BrokerRelease(), RegistryInfo{Features: features, CapFeatures: true}, []Handler{fakeHandler(3, 0, 13)})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := serveApiVersions(t, r, 4, "sluice-test", "1.0")
	for _, f := range got.SupportedFeatures {
		if f.Name == "streams.version" && f.MaxVersion != 0 {
			t.Errorf("%s advertised up to %d, want 0", f.Name, f.MaxVersion)
		}
		if f.Name == "share.version" && f.MaxVersion != 2 {
			t.Errorf("share.version advertised up to %d, want 2 (KIP-932 is served)", f.MaxVersion)
		}
		if f.Name == "group.version" && f.MaxVersion != 1 {
			t.Errorf("group.version advertised up to %d, want 1 (KIP-848 is served)", f.MaxVersion)
		}
	}
	for _, f := range got.FinalizedFeatures {
		if f.Name == "streams.version" {
			t.Errorf("%s reported finalized at %d", f.Name, f.MaxVersionLevel)
		}
	}
}
