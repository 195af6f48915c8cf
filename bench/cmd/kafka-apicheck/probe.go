package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxResponseBytes bounds what we accept as an ApiVersions response; a real one is a few
// hundred bytes, so anything near this is a broken or hostile peer.
const maxResponseBytes = 1 << 20

// probeCorrelationID is fixed so that a dumped response is byte-for-byte reproducible.
const probeCorrelationID int32 = 1

// apiVersionsExchange is one ApiVersions round trip as seen on the wire.
type apiVersionsExchange struct {
	// Raw is the response exactly as received: 4-byte size, correlation id, body.
	Raw      []byte
	Response *kmsg.ApiVersionsResponse
}

// encodeApiVersionsRequest frames an ApiVersions request of the given version with a
// request header v1 (v0-2) or v2 (flexible, v3+), as Kafka clients send it.
func encodeApiVersionsRequest(version int16, clientID string) []byte {
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(version)
	req.ClientSoftwareName = "sluice-kafka-apicheck"
	req.ClientSoftwareVersion = "1"

	msg := make([]byte, 4, 64)
	msg = binary.BigEndian.AppendUint16(msg, uint16(req.Key()))
	msg = binary.BigEndian.AppendUint16(msg, uint16(version))
	msg = binary.BigEndian.AppendUint32(msg, uint32(probeCorrelationID))
	msg = binary.BigEndian.AppendUint16(msg, uint16(len(clientID)))
	msg = append(msg, clientID...)
	if req.IsFlexible() {
		msg = append(msg, 0) // empty tagged-field section of request header v2
	}
	msg = req.AppendTo(msg)
	binary.BigEndian.PutUint32(msg, uint32(len(msg)-4))
	return msg
}

// probeApiVersions dials addr, sends one ApiVersions request and decodes the answer.
// ApiVersions responses always carry response header v0 (no tagged fields), whatever the
// request version, so the body starts right after the correlation id.
func probeApiVersions(addr string, version int16, timeout time.Duration) (*apiVersionsExchange, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return nil, fmt.Errorf("set deadline: %w", err)
	}
	if _, err := conn.Write(encodeApiVersionsRequest(version, "kafka-apicheck")); err != nil {
		return nil, fmt.Errorf("send ApiVersions v%d: %w", version, err)
	}
	raw, err := readFrame(bufio.NewReader(conn))
	if err != nil {
		return nil, fmt.Errorf("read ApiVersions v%d response: %w", version, err)
	}
	resp, err := decodeApiVersionsFrame(raw, version)
	if err != nil {
		return nil, err
	}
	return &apiVersionsExchange{Raw: raw, Response: resp}, nil
}

// readFrame reads one size-prefixed frame and returns it with its prefix.
func readFrame(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, fmt.Errorf("read size: %w", err)
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 4 || n > maxResponseBytes {
		return nil, fmt.Errorf("response size %d out of range [4, %d]", n, maxResponseBytes)
	}
	frame := make([]byte, 4+int(n))
	copy(frame, size[:])
	if _, err := io.ReadFull(r, frame[4:]); err != nil {
		return nil, fmt.Errorf("read %d-byte body: %w", n, err)
	}
	return frame, nil
}

// decodeApiVersionsFrame checks the correlation id and decodes the body. A broker that does
// not support the requested version answers with a v0 body (KIP-511), so on failure at the
// requested version we retry at v0 to report its error code and supported list.
func decodeApiVersionsFrame(frame []byte, version int16) (*kmsg.ApiVersionsResponse, error) {
	if len(frame) < 8 {
		return nil, fmt.Errorf("response frame of %d bytes has no correlation id", len(frame))
	}
	if got := int32(binary.BigEndian.Uint32(frame[4:8])); got != probeCorrelationID {
		return nil, fmt.Errorf("correlation id %d, want %d", got, probeCorrelationID)
	}
	body := frame[8:]
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(version)
	err := resp.ReadFrom(body)
	if err == nil {
		return resp, nil
	}
	v0 := kmsg.NewPtrApiVersionsResponse()
	if v0err := v0.ReadFrom(body); v0err == nil && v0.ErrorCode != 0 {
		return v0, nil
	}
	return nil, fmt.Errorf("decode ApiVersions v%d response: %w", version, err)
}
