package api

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/protocol"
)

// FuzzServe feeds arbitrary frames through header parsing, routing and body
// decoding for every key of the pinned release: bad bytes must produce an
// error, never a panic.
func FuzzServe(f *testing.F) {
	for _, req := range []kmsg.Request{kmsg.NewPtrApiVersionsRequest(), kmsg.NewPtrFetchRequest(), kmsg.NewPtrProduceRequest(), kmsg.NewPtrMetadataRequest()} {
		req.SetVersion(req.MaxVersion())
		f.Add(kmsg.NewRequestFormatter().AppendRequest(nil, req, 1)[4:])
	}
	var handlers []Handler
	for _, v := range PinnedRelease().APIs {
		if v.Key != 18 {
			handlers = append(handlers, fakeHandler(v.Key, v.Min, v.Max))
		}
	}
	r, err := NewRegistry(BrokerRelease(), RegistryInfo{}, handlers)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		h, body, err := protocol.ParseRequestHeader(frame)
		if err != nil {
			return
		}
		_, _ = r.Serve(context.Background(), &ConnState{}, h, body)
	})
}
