package api

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/protocol"
)

// The files in testdata/apiversions are ApiVersions responses of a real Kafka
// 4.4.0 node (see testdata/apiversions/README.md for the capture commands).
// With a handler registered for every key Kafka serves and Kafka's finalized
// features, Sluice's answer must be the same bytes.

func registryLikeKafka(t *testing.T, info RegistryInfo) *Registry {
	t.Helper()
	rel := PinnedRelease()
	var handlers []Handler
	for _, v := range rel.APIs {
		if v.Key == 18 {
			continue
		}
		handlers = append(handlers, fakeHandler(v.Key, 0, kmsg.RequestForKey(v.Key).MaxVersion()))
	}
	info.Features = StaticFeatures{Epoch: rel.FinalizedEpoch, Levels: rel.Finalized}
	r, err := NewRegistry(BrokerRelease(), info, handlers)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// answerFrame serves req as the server would and returns the whole response
// frame, correlation id 1 as in the captures.
func answerFrame(t *testing.T, r *Registry, req *kmsg.ApiVersionsRequest) []byte {
	t.Helper()
	wire := kmsg.NewRequestFormatter(kmsg.FormatterClientID("sluice-probe")).AppendRequest(nil, req, 1)
	h, body, err := protocol.ParseRequestHeader(wire[4:])
	if err != nil {
		t.Fatal(err)
	}
	resp, err := r.Serve(context.Background(), &ConnState{}, h, body)
	if err != nil {
		t.Fatal(err)
	}
	return protocol.AppendResponseFrame(nil, 1, protocol.ResponseHeaderFlexible(h.APIKey, h.APIVersion), resp.Body())
}

func golden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "apiversions", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func apiVersionsRequest(version int16) *kmsg.ApiVersionsRequest {
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(version)
	req.ClientSoftwareName, req.ClientSoftwareVersion = "sluice-kafka-apicheck", "1"
	return req
}

func TestApiVersionsMatchesKafkaBytes(t *testing.T) {
	r := registryLikeKafka(t, RegistryInfo{})
	for _, v := range []int16{0, 1, 2, 3, 4, 5, 127} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			got := answerFrame(t, r, apiVersionsRequest(v))
			want := golden(t, fmt.Sprintf("kafka-4.4.0-v%d.bin", v))
			if !bytes.Equal(got, want) {
				t.Fatalf("bytes differ from Kafka 4.4.0\n got % x\nwant % x", got, want)
			}
		})
	}
}

func TestApiVersionsV5IdentityMatchesKafkaBytes(t *testing.T) {
	r := registryLikeKafka(t, RegistryInfo{ClusterID: "sluice-test-cluster", NodeID: 1})
	wrong := "wrong-cluster"
	for _, tc := range []struct {
		file      string
		clusterID *string
		nodeID    int32
		software  string
	}{
		{"kafka-4.4.0-v5-wrong-cluster.bin", &wrong, 1, "sluice-probe"},
		{"kafka-4.4.0-v5-cluster-without-node.bin", &wrong, -1, "sluice-probe"},
		{"kafka-4.4.0-v5-node-without-cluster.bin", nil, 7, "sluice-probe"},
		{"kafka-4.4.0-v5-invalid-software.bin", nil, -1, "-bad"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			req := apiVersionsRequest(5)
			req.ClientSoftwareName, req.ClientSoftwareVersion = tc.software, "1"
			req.ClusterID, req.NodeID = tc.clusterID, tc.nodeID
			if got, want := answerFrame(t, r, req), golden(t, tc.file); !bytes.Equal(got, want) {
				t.Fatalf("bytes differ from Kafka 4.4.0\n got % x\nwant % x", got, want)
			}
		})
	}
	right := "sluice-test-cluster"
	req := apiVersionsRequest(5)
	req.ClusterID, req.NodeID = &right, 1
	if got, want := answerFrame(t, r, req), golden(t, "kafka-4.4.0-v5.bin"); !bytes.Equal(got, want) {
		t.Fatal("a v5 request naming this broker must get the normal answer")
	}
}
