package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func frameOf(payload []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(payload))), payload...)
}

func TestReadFrameWithinLimit(t *testing.T) {
	got, err := ReadFrame(bytes.NewReader(frameOf([]byte("hello"))), 5, nil)
	if err != nil || string(got) != "hello" {
		t.Fatalf("ReadFrame = %q, %v", got, err)
	}
}

func TestReadFrameAboveLimit(t *testing.T) {
	_, err := ReadFrame(bytes.NewReader(frameOf([]byte("hello!"))), 5, nil)
	var tooLarge *FrameTooLargeError
	if !errors.As(err, &tooLarge) || tooLarge.Size != 6 || tooLarge.Limit != 5 {
		t.Fatalf("err = %v, want FrameTooLargeError{6,5}", err)
	}
}

func TestReadFrameNegativeAndTruncated(t *testing.T) {
	if _, err := ReadFrame(bytes.NewReader([]byte{0xff, 0xff, 0xff, 0xfe}), 100, nil); !errors.Is(err, ErrNegativeFrameSize) {
		t.Fatalf("negative size: err = %v", err)
	}
	if _, err := ReadFrame(bytes.NewReader([]byte{0, 0, 0, 9, 1, 2}), 100, nil); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("truncated: err = %v", err)
	}
	if _, err := ReadFrame(bytes.NewReader(nil), 100, nil); err != io.EOF {
		t.Fatalf("empty stream: err = %v, want io.EOF", err)
	}
}

func TestParseRequestHeaderRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name     string
		req      kmsg.Request
		version  int16
		flexible bool
	}{
		{"metadata v8 header v1", kmsg.NewPtrMetadataRequest(), 8, false},
		{"metadata v9 header v2", kmsg.NewPtrMetadataRequest(), 9, true},
		{"apiversions v3 header v2", kmsg.NewPtrApiVersionsRequest(), 3, true},
		{"apiversions v127 header v2", kmsg.NewPtrApiVersionsRequest(), 127, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.SetVersion(tc.version)
			wire := kmsg.NewRequestFormatter(kmsg.FormatterClientID("cli")).AppendRequest(nil, tc.req, 42)
			h, body, err := ParseRequestHeader(wire[4:])
			if err != nil {
				t.Fatal(err)
			}
			if h.APIKey != tc.req.Key() || h.APIVersion != tc.version || h.CorrelationID != 42 ||
				h.ClientIDString() != "cli" || h.Flexible != tc.flexible {
				t.Fatalf("header = %+v", h)
			}
			if tc.version > tc.req.MaxVersion() {
				return
			}
			decoded, err := DecodeRequestBody(h, body)
			if err != nil {
				t.Fatal(err)
			}
			if decoded.GetVersion() != tc.version {
				t.Fatalf("decoded version %d", decoded.GetVersion())
			}
		})
	}
}

func TestParseRequestHeaderNullClientID(t *testing.T) {
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(4)
	wire := kmsg.NewRequestFormatter().AppendRequest(nil, req, 1)
	h, _, err := ParseRequestHeader(wire[4:])
	if err != nil || h.ClientID != nil {
		t.Fatalf("header %+v, err %v; want null client id", h, err)
	}
}

func TestParseRequestHeaderUnknownKey(t *testing.T) {
	frame := []byte{0x7f, 0x00, 0, 1, 0, 0, 0, 9, 0xff, 0xff}
	_, _, err := ParseRequestHeader(frame)
	var unknown *UnknownAPIKeyError
	if !errors.As(err, &unknown) || unknown.Key != 0x7f00 || unknown.CorrelationID != 9 {
		t.Fatalf("err = %v", err)
	}
}

func TestParseRequestHeaderMalformed(t *testing.T) {
	for name, frame := range map[string][]byte{
		"short":             {0, 3, 0},
		"no client id":      {0, 3, 0, 1, 0, 0, 0, 1},
		"client id too big": {0, 3, 0, 1, 0, 0, 0, 1, 0, 9, 'a'},
		"bad client len":    {0, 3, 0, 1, 0, 0, 0, 1, 0xff, 0xf0},
		"tags truncated":    {0, 3, 0, 9, 0, 0, 0, 1, 0xff, 0xff, 1, 0, 5, 'x'},
		"varint overflow":   {0, 3, 0, 9, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := ParseRequestHeader(frame)
			var malformed *MalformedRequestError
			if !errors.As(err, &malformed) {
				t.Fatalf("err = %v, want MalformedRequestError", err)
			}
		})
	}
}

func TestDecodeRequestBodyMalformed(t *testing.T) {
	h := RequestHeader{APIKey: 3, APIVersion: 12, Flexible: true}
	var malformed *MalformedRequestError
	if _, err := DecodeRequestBody(h, []byte{0x05, 0xff}); !errors.As(err, &malformed) {
		t.Fatalf("err = %v, want MalformedRequestError", err)
	}
}

func TestResponseHeaders(t *testing.T) {
	if ResponseHeaderFlexible(18, 3) {
		t.Fatal("ApiVersions v3 must use response header v0")
	}
	if !ResponseHeaderFlexible(3, 9) || ResponseHeaderFlexible(3, 8) {
		t.Fatal("Metadata v9 is the first flexible response header")
	}
	resp := kmsg.NewPtrMetadataResponse()
	resp.SetVersion(12)
	frame := AppendResponseFrame(nil, 7, true, resp)
	if got := int(binary.BigEndian.Uint32(frame)); got != len(frame)-4 {
		t.Fatalf("size prefix %d, frame %d", got, len(frame))
	}
	if !bytes.Equal(frame[4:9], []byte{0, 0, 0, 7, 0}) {
		t.Fatalf("header bytes % x", frame[4:9])
	}
	decoded := kmsg.NewPtrMetadataResponse()
	decoded.SetVersion(12)
	if err := decoded.ReadFrom(frame[9:]); err != nil {
		t.Fatal(err)
	}
}

func FuzzParseRequest(f *testing.F) {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(13)
	f.Add(kmsg.NewRequestFormatter().AppendRequest(nil, req, 1)[4:])
	f.Fuzz(func(t *testing.T, frame []byte) {
		h, body, err := ParseRequestHeader(frame)
		if err != nil {
			return
		}
		_, _ = DecodeRequestBody(h, body)
	})
}
