package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/api"
	"github.com/sluice-io/sluice/internal/protocol"
)

// BenchmarkMetadataRoundTrip measures the server's per-request overhead:
// one connection, a trivial handler, request written and answer read.
func BenchmarkMetadataRoundTrip(b *testing.B) {
	reg, err := api.NewRegistry(api.BrokerRelease(), api.RegistryInfo{}, []api.Handler{{Key: 3, MinVersion: 0, MaxVersion: 12,
		Handle: func(_ context.Context, req *api.Request) api.Response { return api.Reply(req.Body.ResponseKind()) }}})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := New(Options{
		Listeners: []Listener{{Name: "PLAINTEXT", Address: "127.0.0.1:0"}},
		Registry:  reg,
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}()
	c, err := net.Dial("tcp", srv.Addr("PLAINTEXT").String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(12)
	wire := kmsg.NewRequestFormatter(kmsg.FormatterClientID("bench")).AppendRequest(nil, req, 1)
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c.Write(wire); err != nil {
			b.Fatal(err)
		}
		if buf, err = protocol.ReadFrame(c, 1<<20, buf); err != nil {
			b.Fatal(err)
		}
	}
}
