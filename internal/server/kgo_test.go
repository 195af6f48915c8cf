package server

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFranzGoClientNegotiates: a real client connects, negotiates with
// ApiVersions at its own highest version and gets our vector back.
func TestFranzGoClientNegotiates(t *testing.T) {
	ts := startServer(t, nil, metadataHandler(nil))
	cl, err := kgo.NewClient(kgo.SeedBrokers(ts.addr), kgo.RequestRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cl.Request(ctx, kmsg.NewPtrApiVersionsRequest())
	if err != nil {
		t.Fatal(err)
	}
	av := resp.(*kmsg.ApiVersionsResponse)
	if av.ErrorCode != 0 || len(av.ApiKeys) != 2 || av.ApiKeys[1].ApiKey != 18 || av.ApiKeys[1].MaxVersion != 5 {
		t.Fatalf("client got %+v", av)
	}
}
