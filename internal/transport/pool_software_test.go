package transport

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/version"
)

// A node's requests to its peers name Sluice and its version in the
// ApiVersions request that opens each connection.
func TestPoolSendsSoftwareNameAndVersion(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	p := NewPool("node-1")
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go func() { _, _ = p.Request(ctx, ln.Addr().String(), kmsg.NewPtrMetadataRequest()) }() // only its first request is read

	conn, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var size [4]byte
	if _, err := io.ReadFull(conn, size[:]); err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(conn, frame); err != nil {
		t.Fatal(err)
	}
	key, ver := int16(binary.BigEndian.Uint16(frame)), int16(binary.BigEndian.Uint16(frame[2:]))
	if key != kmsg.ApiVersions.Int16() || ver < 3 {
		t.Fatalf("first request: key %d v%d, want ApiVersions v3+", key, ver)
	}
	// Request header v2: key, version, correlation id, client id (int16
	// length), tagged fields (one byte, none here).
	idLen := int(int16(binary.BigEndian.Uint16(frame[8:])))
	body := frame[10+max(idLen, 0)+1:]
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = ver
	if err := req.ReadFrom(body); err != nil {
		t.Fatal(err)
	}
	if req.ClientSoftwareName != "sluice" || req.ClientSoftwareVersion != version.Version() {
		t.Fatalf("software %q %q, want sluice %s", req.ClientSoftwareName, req.ClientSoftwareVersion, version.Version())
	}
}
