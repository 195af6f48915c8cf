package sasl

import (
	"context"
	"errors"
	"testing"
	"time"

	kgosasl "github.com/twmb/franz-go/pkg/sasl"
)

// t0 is the tests' fixed time.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// result is how an exchange between a franz-go client mechanism and a
// Server ended.
type result struct {
	serverErr error // the server refused
	clientErr error // the client refused the server's answer
	steps     int   // messages the server consumed
}

// exchange drives client against srv message by message, as kgo's broker
// connection does: the client's initial message, then each server answer
// to the client's Challenge, until one side is done or fails.
func exchange(t *testing.T, client kgosasl.Mechanism, srv Server, now time.Time) result {
	t.Helper()
	session, msg, err := client.Authenticate(context.Background(), "127.0.0.1:9092")
	if err != nil {
		t.Fatalf("client Authenticate: %v", err)
	}
	var r result
	for r.steps < 10 {
		resp, done, err := srv.Step(msg, now)
		r.steps++
		if err != nil {
			r.serverErr = err
			return r
		}
		clientDone, next, err := session.Challenge(resp)
		if err != nil {
			r.clientErr = err
			return r
		}
		if done != clientDone {
			t.Fatalf("server done %v but client done %v after step %d", done, clientDone, r.steps)
		}
		if done {
			return r
		}
		msg = next
	}
	t.Fatal("exchange did not end in 10 steps")
	return r
}

// wantRefused checks that err is a *Error whose client message is
// clientMsg ("" for Kafka's generic one).
func wantRefused(t *testing.T, err error, m Mechanism, clientMsg string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want a *sasl.Error", err, err)
	}
	if e.Mechanism != m || e.Client != clientMsg {
		t.Fatalf("err = %+v, want mechanism %s and client message %q", e, m, clientMsg)
	}
}

// memStore is a CredentialStore over a map.
type memStore map[Mechanism]map[string]Credential

func (s memStore) ScramCredential(user string, m Mechanism) (Credential, bool) {
	c, ok := s[m][user]
	return c, ok
}

func (s memStore) add(t testing.TB, m Mechanism, user, password string, iterations int) {
	t.Helper()
	c, err := NewCredential(m, password, iterations, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s[m] == nil {
		s[m] = map[string]Credential{}
	}
	s[m][user] = c
}
