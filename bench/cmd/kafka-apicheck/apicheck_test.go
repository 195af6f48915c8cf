package main

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// fakeBroker answers every connection's first request with the given ApiVersions response
// body (encoded at respVersion) and records the request frame it received.
type fakeBroker struct {
	ln       net.Listener
	requests chan []byte
	done     chan struct{}
}

func startFakeBroker(t *testing.T, resp *kmsg.ApiVersionsResponse, respVersion int16) *fakeBroker {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	fb := &fakeBroker{ln: ln, requests: make(chan []byte, 8), done: make(chan struct{})}
	go func() {
		defer close(fb.done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			fb.serve(conn, resp, respVersion)
		}
	}()
	t.Cleanup(func() { ln.Close(); <-fb.done })
	return fb
}

func (fb *fakeBroker) serve(conn net.Conn, resp *kmsg.ApiVersionsResponse, respVersion int16) {
	defer conn.Close()
	req, err := readFrame(conn)
	if err != nil {
		return
	}
	fb.requests <- req
	resp.SetVersion(respVersion)
	out := binary.BigEndian.AppendUint32(make([]byte, 4), uint32(probeCorrelationID))
	out = resp.AppendTo(out)
	binary.BigEndian.PutUint32(out, uint32(len(out)-4))
	_, _ = conn.Write(out)
}

func (fb *fakeBroker) addr() string { return fb.ln.Addr().String() }

func responseWith(keys ...kmsg.ApiVersionsResponseApiKey) *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.ApiKeys = keys
	return resp
}

func apiKey(key, minV, maxV int16) kmsg.ApiVersionsResponseApiKey {
	k := kmsg.NewApiVersionsResponseApiKey()
	k.ApiKey, k.MinVersion, k.MaxVersion = key, minV, maxV
	return k
}

func TestPassesWhenKmsgCoversEveryKey(t *testing.T) {
	fetchMax := kmsg.NewPtrFetchRequest().MaxVersion()
	fb := startFakeBroker(t, responseWith(apiKey(1, 4, fetchMax), apiKey(18, 0, 4)), 3)
	var out, errOut bytes.Buffer
	if code := run([]string{"--bootstrap", fb.addr()}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d, want 0; stdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "PASS") || strings.Contains(out.String(), "BROKER AHEAD") {
		t.Fatalf("unexpected table:\n%s", out.String())
	}
}

func TestFailsWhenBrokerIsAhead(t *testing.T) {
	fetchMax := kmsg.NewPtrFetchRequest().MaxVersion()
	fb := startFakeBroker(t, responseWith(apiKey(1, 4, fetchMax+1), apiKey(18, 0, 4)), 3)
	var out, errOut bytes.Buffer
	if code := run([]string{"--bootstrap", fb.addr()}, &out, &errOut); code != 1 {
		t.Fatalf("exit %d, want 1; stdout:\n%s", code, out.String())
	}
	if !strings.Contains(out.String(), "BROKER AHEAD") {
		t.Fatalf("table does not flag Fetch:\n%s", out.String())
	}
}

func TestUnknownKeyCountsAsAhead(t *testing.T) {
	verdicts := compareWithKmsg([]kmsg.ApiVersionsResponseApiKey{apiKey(32000, 0, 0), apiKey(0, 0, 3)})
	if len(verdicts) != 2 || verdicts[0].Key != 0 || verdicts[0].BrokerAhead {
		t.Fatalf("Produce verdict wrong: %+v", verdicts)
	}
	if !verdicts[1].BrokerAhead || verdicts[1].KmsgKnowsKey {
		t.Fatalf("unknown key not flagged: %+v", verdicts[1])
	}
}

func TestDumpRawWritesTheResponseAsReceived(t *testing.T) {
	fb := startFakeBroker(t, responseWith(apiKey(18, 0, 3)), 2)
	dump := filepath.Join(t.TempDir(), "apiversions.bin")
	var out, errOut bytes.Buffer
	if code := run([]string{"--bootstrap", fb.addr(), "--request-version", "2", "--dump-raw", dump}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut.String())
	}
	raw, err := os.ReadFile(dump)
	if err != nil {
		t.Fatalf("read dump: %v", err)
	}
	if got := int(binary.BigEndian.Uint32(raw)); got != len(raw)-4 {
		t.Fatalf("size prefix %d, file holds %d bytes after it", got, len(raw)-4)
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(2)
	if err := resp.ReadFrom(raw[8:]); err != nil || len(resp.ApiKeys) != 1 || resp.ApiKeys[0].MaxVersion != 3 {
		t.Fatalf("dumped body does not decode back: %v %+v", err, resp)
	}
	req := <-fb.requests
	if key, ver := binary.BigEndian.Uint16(req[4:]), binary.BigEndian.Uint16(req[6:]); key != 18 || ver != 2 {
		t.Fatalf("sent key %d version %d, want 18 v2", key, ver)
	}
}

func TestUnsupportedVersionFallsBackToV0Body(t *testing.T) {
	resp := responseWith(apiKey(18, 0, 3))
	resp.ErrorCode = 35 // UNSUPPORTED_VERSION, answered with a v0 body per KIP-511
	fb := startFakeBroker(t, resp, 0)
	var out, errOut bytes.Buffer
	if code := run([]string{"--bootstrap", fb.addr(), "--request-version", "4"}, &out, &errOut); code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	if !strings.Contains(errOut.String(), "error code 35") {
		t.Fatalf("stderr does not name the error: %s", errOut.String())
	}
}

func TestFlexibleRequestDecodesAsKafkaWould(t *testing.T) {
	frame := encodeApiVersionsRequest(3, "c")
	if got := int(binary.BigEndian.Uint32(frame)); got != len(frame)-4 {
		t.Fatalf("size %d, body %d", got, len(frame)-4)
	}
	// header v2: key, version, correlation id, client id "c", empty tags; then the body.
	body := frame[4+2+2+4+2+1+1:]
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(3)
	if err := req.ReadFrom(body); err != nil || req.ClientSoftwareName != "sluice-kafka-apicheck" {
		t.Fatalf("body does not decode: %v %+v", err, req)
	}
}

func TestRejectsOversizedFrame(t *testing.T) {
	frame := binary.BigEndian.AppendUint32(nil, maxResponseBytes+1)
	if _, err := readFrame(io.MultiReader(bytes.NewReader(frame))); err == nil {
		t.Fatal("oversized frame accepted")
	}
}
