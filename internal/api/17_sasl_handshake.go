package api

// SaslHandshake (key 17), versions 0-1: the pinned Kafka release's range;
// SaslAuthenticate is key 36.
//
// Behaviour as Kafka's: on a SASL_PLAINTEXT or SASL_SSL listener the
// connection's exchange (internal/server, Kafka's SaslServerAuthenticator)
// answers: the enabled mechanisms, UNSUPPORTED_SASL_MECHANISM with them
// for any other mechanism (the answer delayed by
// connection.failed.authentication.delay.ms, then the connection closed),
// and on an authenticated connection whose client sent SaslAuthenticate v1+
// the start of a re-authentication (KIP-368). Anywhere else (a PLAINTEXT or
// SSL listener, or an authenticated connection that cannot re-authenticate)
// the answer is ILLEGAL_SASL_STATE, as KafkaApis gives. After version 0 the
// mechanism's messages follow as raw tokens framed by their size alone
// (no Kafka headers, no SaslAuthenticate), and a refused one closes the
// connection without an answer, as Kafka does.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SASLExchange is a connection's SASL authentication, kept by the server
// (ConnState.SASL) on SASL listeners. The server admits only ApiVersions,
// SaslHandshake and SaslAuthenticate before it completes; these methods
// answer the latter two. A failure's answer comes back already delayed,
// and the server closes the connection once it is written.
type SASLExchange interface {
	Handshake(ctx context.Context, req *kmsg.SASLHandshakeRequest) *kmsg.SASLHandshakeResponse
	Authenticate(ctx context.Context, req *kmsg.SASLAuthenticateRequest) Response
}

func newSASLHandshakeHandler() Handler {
	return Handler{
		Key:        17,
		MinVersion: 0,
		MaxVersion: 1,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.SASLHandshakeRequest)
			if req.Conn.SASL != nil {
				return Reply(req.Conn.SASL.Handshake(ctx, body))
			}
			resp := body.ResponseKind().(*kmsg.SASLHandshakeResponse)
			resp.ErrorCode = kerr.IllegalSaslState.Code
			return Reply(resp)
		},
	}
}
