package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ApiVersionsKey is the one API whose response header never carries tagged
// fields, whatever its version (KIP-511).
const ApiVersionsKey int16 = 18

// RequestHeader is a parsed request header (v1, or v2 when Flexible).
type RequestHeader struct {
	APIKey        int16
	APIVersion    int16
	CorrelationID int32
	// ClientID is nil when the client sent a null client id.
	ClientID *string
	// Flexible reports header v2 (tagged fields after the client id), which
	// the request's version decides.
	Flexible bool
}

// ClientIDString returns the client id, or "" when it was null.
func (h RequestHeader) ClientIDString() string {
	if h.ClientID == nil {
		return ""
	}
	return *h.ClientID
}

// UnknownAPIKeyError reports a request key Sluice (and kmsg) does not know.
type UnknownAPIKeyError struct {
	Key           int16
	CorrelationID int32
}

func (e *UnknownAPIKeyError) Error() string { return fmt.Sprintf("unknown api key %d", e.Key) }

// UnsupportedVersionError reports a request version outside the served range.
type UnsupportedVersionError struct {
	Key, Version, Min, Max int16
}

func (e *UnsupportedVersionError) Error() string {
	return fmt.Sprintf("api key %d version %d unsupported (serving %d..%d)", e.Key, e.Version, e.Min, e.Max)
}

// MalformedRequestError reports a request header or body that does not parse.
type MalformedRequestError struct {
	Key, Version int16
	Err          error
}

func (e *MalformedRequestError) Error() string {
	return fmt.Sprintf("malformed request (api key %d version %d): %v", e.Key, e.Version, e.Err)
}

func (e *MalformedRequestError) Unwrap() error { return e.Err }

var errShortHeader = errors.New("request header truncated")

// ParseRequestHeader parses the header at the start of a frame and returns it
// with the body bytes that follow. The header version depends on whether the
// request's version is flexible, which only the key's schema knows, so an
// unknown key fails with *UnknownAPIKeyError before the client id is read.
// Any other failure is a *MalformedRequestError.
func ParseRequestHeader(frame []byte) (RequestHeader, []byte, error) {
	var h RequestHeader
	if len(frame) < 8 {
		return h, nil, &MalformedRequestError{Key: -1, Version: -1, Err: errShortHeader}
	}
	h.APIKey = int16(binary.BigEndian.Uint16(frame[0:]))
	h.APIVersion = int16(binary.BigEndian.Uint16(frame[2:]))
	h.CorrelationID = int32(binary.BigEndian.Uint32(frame[4:]))
	req := kmsg.RequestForKey(h.APIKey)
	if req == nil {
		return h, nil, &UnknownAPIKeyError{Key: h.APIKey, CorrelationID: h.CorrelationID}
	}
	req.SetVersion(h.APIVersion)
	h.Flexible = req.IsFlexible()
	rest := frame[8:]
	malformed := func(err error) (RequestHeader, []byte, error) {
		return h, nil, &MalformedRequestError{Key: h.APIKey, Version: h.APIVersion, Err: err}
	}
	if len(rest) < 2 {
		return malformed(errShortHeader)
	}
	idLen := int16(binary.BigEndian.Uint16(rest))
	rest = rest[2:]
	switch {
	case idLen == -1:
	case idLen < -1:
		return malformed(fmt.Errorf("client id length %d", idLen))
	case int(idLen) > len(rest):
		return malformed(errShortHeader)
	default:
		id := string(rest[:idLen])
		h.ClientID = &id
		rest = rest[idLen:]
	}
	if h.Flexible {
		var err error
		if rest, err = skipTaggedFields(rest); err != nil {
			return malformed(fmt.Errorf("header tagged fields: %w", err))
		}
	}
	return h, rest, nil
}

// DecodeRequestBody decodes a request body with kmsg at the header's version.
func DecodeRequestBody(h RequestHeader, body []byte) (kmsg.Request, error) {
	req := kmsg.RequestForKey(h.APIKey)
	if req == nil {
		return nil, &UnknownAPIKeyError{Key: h.APIKey, CorrelationID: h.CorrelationID}
	}
	req.SetVersion(h.APIVersion)
	if err := req.ReadFrom(body); err != nil {
		return nil, &MalformedRequestError{Key: h.APIKey, Version: h.APIVersion, Err: err}
	}
	return req, nil
}

// skipTaggedFields skips a tagged-field section: a count, then per field a
// tag and a size-prefixed value.
func skipTaggedFields(b []byte) ([]byte, error) {
	count, b, err := readUvarint(b)
	if err != nil {
		return nil, err
	}
	for range count {
		if _, b, err = readUvarint(b); err != nil {
			return nil, err
		}
		var size uint64
		if size, b, err = readUvarint(b); err != nil {
			return nil, err
		}
		if size > uint64(len(b)) {
			return nil, errShortHeader
		}
		b = b[size:]
	}
	return b, nil
}

func readUvarint(b []byte) (uint64, []byte, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 || v > 1<<31-1 {
		return 0, nil, errors.New("bad unsigned varint")
	}
	return v, b[n:], nil
}

// ResponseHeaderFlexible reports whether the response to (key, version) uses
// response header v1 (a tagged-field section after the correlation id).
// ApiVersions never does; an unknown key does not.
func ResponseHeaderFlexible(key, version int16) bool {
	if key == ApiVersionsKey {
		return false
	}
	req := kmsg.RequestForKey(key)
	if req == nil {
		return false
	}
	req.SetVersion(version)
	return req.IsFlexible()
}

// AppendResponseHeader appends a response header: the correlation id, and for
// header v1 an empty tagged-field section.
func AppendResponseHeader(dst []byte, correlationID int32, flexible bool) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(correlationID))
	if flexible {
		dst = append(dst, 0)
	}
	return dst
}

// ResponseHeaderSize is the encoded size of a response header.
func ResponseHeaderSize(flexible bool) int {
	if flexible {
		return 5
	}
	return 4
}

// AppendResponseFrame appends a whole response frame: size prefix, header and
// the kmsg-encoded body.
func AppendResponseFrame(dst []byte, correlationID int32, flexible bool, body kmsg.Response) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = AppendResponseHeader(dst, correlationID, flexible)
	dst = body.AppendTo(dst)
	PutFrameSize(dst, start, len(dst)-start-4)
	return dst
}
