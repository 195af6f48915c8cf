package sasl

import (
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"hash"
	"io"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-io/sluice/internal/auth"
)

type scramState int

const (
	scramReceiveFirst scramState = iota
	scramReceiveFinal
	scramComplete
	scramFailed
)

// scramServer is Kafka's ScramSaslServer (RFC 5802, RFC 7677): the
// client-first message, the server-first answer with the stored salt and
// iteration count, the client-final message with the proof, and the
// server-final answer with the server's signature.
type scramServer struct {
	mech      Mechanism
	hash      func() hash.Hash
	store     CredentialStore
	nonce     func() (string, error)
	state     scramState
	user      string
	cred      Credential
	first     clientFirst
	serverMsg string // server-first-message
	combined  string // client nonce + server nonce
	principal auth.Principal
}

// NewScramServer starts a SCRAM exchange of mechanism m (SCRAM-SHA-256 or
// SCRAM-SHA-512) against the credentials of store; random draws the server
// nonce (nil is crypto/rand).
func NewScramServer(m Mechanism, store CredentialStore, random io.Reader) (Server, error) {
	h, err := scramHash(m)
	if err != nil {
		return nil, err
	}
	if random == nil {
		random = rand.Reader
	}
	return &scramServer{mech: m, hash: h, store: store, nonce: func() (string, error) {
		return scramNonce(random)
	}}, nil
}

// scramNonce is Kafka's ScramFormatter.secureRandomString: 130 random bits
// written in base 36.
func scramNonce(random io.Reader) (string, error) {
	b := make([]byte, 17)
	if _, err := io.ReadFull(random, b); err != nil {
		return "", fmt.Errorf("drawing a SCRAM nonce: %w", err)
	}
	b[0] &= 0x03 // 136 bits drawn, 130 kept
	return new(big.Int).SetBytes(b).Text(36), nil
}

func (s *scramServer) Mechanism() Mechanism { return s.mech }

func (s *scramServer) Principal() auth.Principal { return s.principal }

// SessionLifetime is unbounded: only delegation tokens, which Sluice does
// not issue, give a SCRAM session an expiry in Kafka.
func (s *scramServer) SessionLifetime() (time.Duration, bool) { return 0, false }

func (s *scramServer) Step(msg []byte, _ time.Time) ([]byte, bool, error) {
	var (
		resp []byte
		done bool
		err  error
	)
	switch s.state {
	case scramReceiveFirst:
		resp, err = s.receiveFirst(string(msg))
		s.state = scramReceiveFinal
	case scramReceiveFinal:
		resp, err = s.receiveFinal(string(msg))
		s.state, done = scramComplete, true
	default:
		err = refuse(s.mech, "unexpected message in state %d after the exchange ended", s.state)
	}
	if err != nil {
		// The keys are not kept past the exchange (completion clears
		// them too).
		s.state, s.cred = scramFailed, Credential{}
		return nil, false, err
	}
	return resp, done, nil
}

func (s *scramServer) receiveFirst(msg string) ([]byte, error) {
	first, err := parseClientFirst(msg)
	if err != nil {
		return nil, refuse(s.mech, "Invalid SCRAM client first message format")
	}
	if strings.EqualFold(first.extensions["tokenauth"], "true") {
		// KIP-48 delegation tokens: Sluice has none, so no token id is
		// valid, as Kafka answers for an unknown one.
		return nil, refuse(s.mech, "Token Authentication failed: delegation tokens are not supported")
	}
	serverNonce, err := s.nonce()
	if err != nil {
		return nil, refuse(s.mech, "Authentication failed: %v", err)
	}
	user, err1 := scramUsername(first.saslName)
	authzid, err2 := scramUsername(first.authzid)
	if err1 != nil || err2 != nil {
		return nil, refuse(s.mech, "Authentication failed: Credentials could not be obtained")
	}
	cred, ok := s.store.ScramCredential(user, s.mech)
	if !ok {
		return nil, refuse(s.mech, "Authentication failed: Invalid user credentials")
	}
	if authzid != "" && authzid != user {
		return nil, refuseWith(s.mech, "Authentication failed: Client requested an authorization id that is different from username")
	}
	if cred.Iterations < MinScramIterations {
		return nil, refuse(s.mech, "Iterations %d is less than the minimum %d for %s", cred.Iterations, MinScramIterations, s.mech)
	}
	if size := s.hash().Size(); len(cred.StoredKey) != size || len(cred.ServerKey) != size {
		return nil, refuse(s.mech, "Authentication failed: the stored credential's keys are not %d bytes", size)
	}
	s.user, s.cred, s.first = user, cred, first
	s.combined = first.nonce + serverNonce
	s.serverMsg = "r=" + s.combined + ",s=" + base64.StdEncoding.EncodeToString(cred.Salt) +
		",i=" + strconv.Itoa(cred.Iterations)
	return []byte(s.serverMsg), nil
}

func (s *scramServer) receiveFinal(msg string) ([]byte, error) {
	final, err := parseClientFinal(msg)
	if err != nil {
		return nil, refuse(s.mech, "Authentication failed: Invalid client final message")
	}
	// Kafka checks only that the nonce ends with the server-first one:
	// librdkafka sends its own nonce again in front of it.
	if !strings.HasSuffix(final.nonce, s.combined) {
		return nil, refuse(s.mech, "Invalid client nonce in the final client message.")
	}
	// The proof covers the channel binding too; checking it here names
	// the fault (RFC 5802 section 5.1: c= is the base64 gs2 header).
	if string(final.channelBinding) != s.first.gs2Header {
		return nil, refuse(s.mech, "Invalid channel binding in the final client message.")
	}
	authMsg := []byte(s.first.bare + "," + s.serverMsg + "," + final.withoutProof)
	clientSig := hmacSum(s.hash, s.cred.StoredKey, authMsg)
	if len(final.proof) != len(clientSig) {
		return nil, refuse(s.mech, "Invalid client credentials")
	}
	clientKey := make([]byte, len(clientSig))
	for i := range clientKey {
		clientKey[i] = final.proof[i] ^ clientSig[i]
	}
	h := s.hash()
	h.Write(clientKey)
	if !hmac.Equal(h.Sum(nil), s.cred.StoredKey) { // constant time
		return nil, refuse(s.mech, "Invalid client credentials")
	}
	serverSig := hmacSum(s.hash, s.cred.ServerKey, authMsg)
	s.principal = auth.User(s.user)
	s.cred = Credential{}
	return []byte("v=" + base64.StdEncoding.EncodeToString(serverSig)), nil
}
