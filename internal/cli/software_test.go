package cli

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/version"
)

// TestClientsSendSluicesNameAndVersion reads the first request a CLI
// client sends, its ApiVersions, and wants Sluice's software name and
// version in it.
func TestClientsSendSluicesNameAndVersion(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan *kmsg.ApiVersionsRequest, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		req, err := readAPIVersionsRequest(c)
		if err != nil {
			t.Errorf("reading the first request: %v", err)
		}
		got <- req
	}()
	conn := &connection{brokers: ln.Addr().String(), timeout: 2 * time.Second}
	cl, err := conn.client(&cobra.Command{})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	go cl.Ping(ctx) // never answered: only the request matters
	select {
	case req := <-got:
		if req == nil {
			t.Fatal("no ApiVersions request read")
		}
		if req.ClientSoftwareName != "sluice" || req.ClientSoftwareVersion != softwareVersion(version.Version()) {
			t.Fatalf("ApiVersions names %q %q, want sluice %q", req.ClientSoftwareName, req.ClientSoftwareVersion, version.Version())
		}
	case <-ctx.Done():
		t.Fatal("the client sent no request")
	}
}

// readAPIVersionsRequest reads one request frame (header v2, as
// ApiVersions v3+ is sent) and decodes its ApiVersions body.
func readAPIVersionsRequest(r io.Reader) (*kmsg.ApiVersionsRequest, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	frame := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(r, frame); err != nil {
		return nil, err
	}
	key, ver := int16(binary.BigEndian.Uint16(frame)), int16(binary.BigEndian.Uint16(frame[2:]))
	if key != 18 || ver < 3 {
		return nil, io.ErrUnexpectedEOF
	}
	idLen := int16(binary.BigEndian.Uint16(frame[8:]))
	body := frame[10+max(int(idLen), 0):]
	body, ok := skipTags(body)
	if !ok {
		return nil, io.ErrUnexpectedEOF
	}
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = ver
	return req, req.ReadFrom(body)
}
