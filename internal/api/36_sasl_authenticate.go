package api

// SaslAuthenticate (key 36), versions 0-2: the pinned Kafka release's
// range.
//
// Behaviour as Kafka's: on a SASL listener the connection's exchange
// (SASLExchange, internal/server) feeds auth_bytes to the mechanism chosen
// by SaslHandshake and answers its challenge; a failure is
// SASL_AUTHENTICATION_FAILED with the mechanism's message (or Kafka's
// generic one), delayed by connection.failed.authentication.delay.ms, and
// the connection is closed; success sets the connection's principal and
// answers session_lifetime_ms (v1+, KIP-368). Anywhere else, or after
// authentication outside a re-authentication, the answer is
// ILLEGAL_SASL_STATE with KafkaApis' message.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SASLAuthenticateOutOfState is KafkaApis' message for a SaslAuthenticate
// that no exchange expects.
const SASLAuthenticateOutOfState = "SaslAuthenticate request received after successful authentication"

func newSASLAuthenticateHandler() Handler {
	return Handler{
		Key:        36,
		MinVersion: 0,
		MaxVersion: 2,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.SASLAuthenticateRequest)
			if req.Conn.SASL != nil {
				return req.Conn.SASL.Authenticate(ctx, body)
			}
			return Reply(IllegalSASLAuthenticate(body))
		},
	}
}

// IllegalSASLAuthenticate is the ILLEGAL_SASL_STATE answer to a
// SaslAuthenticate no exchange expects.
func IllegalSASLAuthenticate(req *kmsg.SASLAuthenticateRequest) *kmsg.SASLAuthenticateResponse {
	resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	resp.ErrorCode = kerr.IllegalSaslState.Code
	msg := SASLAuthenticateOutOfState
	resp.ErrorMessage = &msg
	return resp
}
