package api

import (
	"context"
	"errors"
	"io"
	"net"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/auth"
	"github.com/sluice-io/sluice/internal/protocol"
)

// Handler serves one API key.
type Handler struct {
	Key int16
	// MinVersion and MaxVersion bound the versions the handler accepts. The
	// advertised range is this range clipped to the pinned release's.
	MinVersion int16
	MaxVersion int16
	// Handle serves one decoded request. It runs on the connection's reader
	// goroutine, one request at a time per connection, and may block (the
	// connection reads nothing else meanwhile, as in Kafka).
	Handle func(ctx context.Context, req *Request) Response
}

// ConnState is what handlers know of a client connection. The handlers of one
// connection run one at a time, so they may update it without locking; it
// must not be retained past the request.
type ConnState struct {
	// Listener is the listener's name, e.g. "PLAINTEXT".
	Listener string
	// SecurityProtocol is the listener's protocol: auth.Plaintext, auth.SSL,
	// auth.SASLPlaintext or auth.SASLSSL.
	SecurityProtocol string
	// Principal is who the connection is, set by the server once TLS (or
	// SASL) authenticated it: the mapped client certificate name with
	// mTLS, auth.Anonymous on PLAINTEXT or SSL without a client
	// certificate, as Kafka's default principal builder.
	Principal  auth.Principal
	RemoteAddr net.Addr
	LocalAddr  net.Addr
	// ClientSoftwareName and ClientSoftwareVersion are set by ApiVersions v3+.
	ClientSoftwareName    string
	ClientSoftwareVersion string
	// SASL is the connection's SASL exchange on a SASL listener, nil
	// elsewhere (SaslHandshake and SaslAuthenticate answer from it).
	SASL SASLExchange
}

// Request is one decoded request.
type Request struct {
	Header protocol.RequestHeader
	// Body is the decoded body; it is nil only for an ApiVersions request at
	// a version Sluice does not serve, whose body Kafka does not parse either.
	Body kmsg.Request
	Conn *ConnState
	// authz decides the request's actions; nil allows everything (no
	// authorizer configured). The registry sets it.
	authz Authorizer
}

// BodyStream is a response body that writes itself instead of being encoded
// in memory: the Fetch response streams record bytes from segment files.
type BodyStream interface {
	// Len is the body's size in bytes (without frame size and header).
	Len() int64
	// WriteFrame writes head (the frame size and response header, prepared by
	// the server) and then the body to w, zero-copy when w allows it.
	WriteFrame(w io.Writer, head []byte) (int64, error)
}

// Response is a handler's answer: a kmsg body, a streamed body, nothing, or
// closing the connection.
type Response struct {
	body       kmsg.Response
	stream     BodyStream
	noResponse bool
	closeErr   error
	// throttleMs is the client quota throttle the response carries: the
	// server mutes the connection for it once the response is out (KIP-219).
	throttleMs int64
}

// Reply answers with a kmsg response; its version must be the request's.
func Reply(body kmsg.Response) Response { return Response{body: body} }

// Stream answers with a body that writes itself.
func Stream(body BodyStream) Response { return Response{stream: body} }

// NoResponse sends nothing back: Kafka does not answer Produce with acks=0.
func NoResponse() Response { return Response{noResponse: true} }

// CloseConnection answers by closing the connection, logging reason. Kafka
// does so when a Produce with acks=0 fails: the client has no other way to
// learn of the error.
func CloseConnection(reason error) Response {
	if reason == nil {
		reason = errors.New("handler closed the connection")
	}
	return Response{closeErr: reason}
}

// CloseReason returns why the handler asked to close the connection, or nil.
func (r Response) CloseReason() error { return r.closeErr }

// Body returns the kmsg response, or nil.
func (r Response) Body() kmsg.Response { return r.body }

// StreamBody returns the streamed body, or nil.
func (r Response) StreamBody() BodyStream { return r.stream }

// IsNoResponse reports whether the handler chose to send nothing.
func (r Response) IsNoResponse() bool { return r.noResponse }

// WithThrottle marks the response as throttled for ms milliseconds: the
// server reads nothing more from the connection until they have passed
// after the response is written (KIP-219's muting). The body's
// throttle_time_ms is the handler's to set.
func (r Response) WithThrottle(ms int64) Response {
	r.throttleMs = ms
	return r
}

// ThrottleMs is the throttle time the connection is muted for.
func (r Response) ThrottleMs() int64 { return r.throttleMs }

// Valid reports whether the response is exactly one of the three kinds; a
// zero Response is a handler bug, which the server treats as an error rather
// than silently sending nothing.
func (r Response) Valid() bool {
	n := 0
	if r.body != nil {
		n++
	}
	if r.stream != nil {
		n++
	}
	if r.noResponse {
		n++
	}
	if r.closeErr != nil {
		n++
	}
	return n == 1
}
