package node

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	kgosasl "github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/sluice-io/sluice/internal/auth/sasl"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/protocol"
)

// newPeerSASL gives the node's own clients their mechanism on the
// inter-broker and controller listeners when those are SASL: the mechanism
// of sasl.mechanism.inter.broker.protocol or
// sasl.mechanism.controller.protocol with the username and password of
// that listener's <mechanism>.sasl.jaas.config, as Kafka's broker logs in
// with its JAAS entry.
func (n *Node) newPeerSASL() (map[string]kgosasl.Mechanism, error) {
	out := map[string]kgosasl.Mechanism{}
	add := func(listener string, key config.StringKey) error {
		if listener == "" || !n.cfg.IsSASLListener(listener) {
			return nil
		}
		if _, done := out[listener]; done {
			return nil
		}
		m, err := n.clientMechanism(listener, sasl.Mechanism(strings.ToUpper(n.cfg.String(key))))
		if err != nil {
			return err
		}
		out[listener] = m
		return nil
	}
	if err := add(n.cfg.InterBrokerListenerName(), config.SASLMechanismInterBrokerProtocol); err != nil {
		return nil, err
	}
	if names := n.cfg.ControllerListenerNames(); len(names) > 0 {
		if err := add(names[0], config.SASLMechanismControllerProtocol); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// clientMechanism is m logged in with the JAAS entry's username and
// password.
func (n *Node) clientMechanism(listener string, m sasl.Mechanism) (kgosasl.Mechanism, error) {
	e, err := n.jaasEntry(listener, m)
	if err != nil {
		return nil, err
	}
	user, okU := e.Option("username")
	pass, okP := e.Option("password")
	if !okU || !okP {
		return nil, fmt.Errorf("configuration %s: needs the username and password options the node's own clients log in with on listener %s", sasl.JAASConfigKey(listener, m), listener)
	}
	switch m {
	case sasl.Plain:
		return plain.Auth{User: user, Pass: pass}.AsMechanism(), nil
	case sasl.ScramSHA256:
		return scram.Auth{User: user, Pass: pass}.AsSha256Mechanism(), nil
	case sasl.ScramSHA512:
		return scram.Auth{User: user, Pass: pass}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("SASL mechanism %s cannot be used by the node's own clients", m)
}

// saslDial wraps dial so each connection authenticates with m before it is
// used: the raft transport's connections to a SASL CONTROLLER listener,
// which the server hands to raft only once they authenticated.
func saslDial(dial func(ctx context.Context, network, addr string) (net.Conn, error), m kgosasl.Mechanism) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if err := authenticateConn(ctx, nc, addr, m); err != nil {
			nc.Close()
			return nil, fmt.Errorf("SASL %s authentication with %s: %w", m.Name(), addr, err)
		}
		return nc, nil
	}
}

// authenticateConn runs SaslHandshake v1 and SaslAuthenticate v1 over nc,
// as a Kafka client does.
func authenticateConn(ctx context.Context, nc net.Conn, addr string, m kgosasl.Mechanism) error {
	deadline := time.Now().Add(peerDialTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	nc.SetDeadline(deadline)
	defer nc.SetDeadline(time.Time{})
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, m.Name()
	hsResp := hs.ResponseKind().(*kmsg.SASLHandshakeResponse)
	if err := roundTrip(nc, hs, hsResp, 1); err != nil {
		return err
	}
	if err := kerr.ErrorForCode(hsResp.ErrorCode); err != nil {
		return err
	}
	session, write, err := m.Authenticate(ctx, addr)
	if err != nil {
		return err
	}
	for i, done := int32(2), false; !done || len(write) > 0; i++ {
		req := kmsg.NewPtrSASLAuthenticateRequest()
		req.Version, req.SASLAuthBytes = 1, write
		resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		if err := roundTrip(nc, req, resp, i); err != nil {
			return err
		}
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			if resp.ErrorMessage != nil {
				return fmt.Errorf("%w: %s", err, *resp.ErrorMessage)
			}
			return err
		}
		write = nil
		if !done {
			if done, write, err = session.Challenge(resp.SASLAuthBytes); err != nil {
				return err
			}
		}
	}
	return nil
}

// roundTrip writes req and reads its response (non-flexible headers: the
// SASL requests at version 1).
func roundTrip(nc net.Conn, req kmsg.Request, resp kmsg.Response, correlationID int32) error {
	if _, err := nc.Write(kmsg.NewRequestFormatter(kmsg.FormatterClientID("sluice-raft")).AppendRequest(nil, req, correlationID)); err != nil {
		return err
	}
	frame, err := protocol.ReadFrame(nc, 1<<20, nil)
	if err != nil {
		return err
	}
	if len(frame) < 4 {
		return fmt.Errorf("short response")
	}
	resp.SetVersion(req.GetVersion())
	return resp.ReadFrom(frame[4:])
}
