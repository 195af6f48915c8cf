package sasl

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
	"hash"
	"io"
)

// Credential is a user's SCRAM credential for one mechanism, as Kafka's
// ScramCredential and UserScramCredentialRecord hold it. It is derived from
// the password and never reveals it, but it is secret all the same: whoever
// has StoredKey and ServerKey can impersonate the server.
type Credential struct {
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int
}

// CredentialStore looks up SCRAM credentials, as Kafka's
// ScramServerCallbackHandler asks its CredentialCache. ImageCredentials
// serves them from the metadata image; an implementation must be safe for
// the connections' concurrent calls.
type CredentialStore interface {
	ScramCredential(user string, mechanism Mechanism) (Credential, bool)
}

// MinScramIterations is Kafka's ScramMechanism.minIterations: a stored
// credential with fewer iterations is refused at authentication.
const MinScramIterations = 4096

// IsScram reports whether m is SCRAM-SHA-256 or SCRAM-SHA-512.
func (m Mechanism) IsScram() bool { return m == ScramSHA256 || m == ScramSHA512 }

// scramHash is the hash function of a SCRAM mechanism.
func scramHash(m Mechanism) (func() hash.Hash, error) {
	switch m {
	case ScramSHA256:
		return sha256.New, nil
	case ScramSHA512:
		return sha512.New, nil
	}
	return nil, fmt.Errorf("%q is not a SCRAM mechanism", m)
}

// SaltedPassword is RFC 5802's Hi(password, salt, iterations), what
// AlterUserScramCredentials carries as salted_password.
func SaltedPassword(m Mechanism, password string, salt []byte, iterations int) ([]byte, error) {
	h, err := scramHash(m)
	if err != nil {
		return nil, err
	}
	if iterations < 1 {
		return nil, fmt.Errorf("SCRAM iterations must be positive, not %d", iterations)
	}
	key, err := pbkdf2.Key(h, password, salt, iterations, h().Size())
	if err != nil {
		return nil, fmt.Errorf("salting the SCRAM password: %w", err)
	}
	return key, nil
}

// CredentialFromSaltedPassword derives the stored and server keys, as
// Kafka's ScramFormatter.generateCredential(salt, saltedPassword,
// iterations) does when the controller applies AlterUserScramCredentials.
func CredentialFromSaltedPassword(m Mechanism, salt, saltedPassword []byte, iterations int) (Credential, error) {
	h, err := scramHash(m)
	if err != nil {
		return Credential{}, err
	}
	clientKey := hmacSum(h, saltedPassword, []byte("Client Key"))
	stored := h()
	stored.Write(clientKey)
	return Credential{
		Salt:       append([]byte(nil), salt...),
		StoredKey:  stored.Sum(nil),
		ServerKey:  hmacSum(h, saltedPassword, []byte("Server Key")),
		Iterations: iterations,
	}, nil
}

// NewCredential makes a credential for password with a fresh 32-byte salt
// from random (nil is crypto/rand): for tests and for users a broker's own
// configuration defines.
func NewCredential(m Mechanism, password string, iterations int, random io.Reader) (Credential, error) {
	if random == nil {
		random = rand.Reader
	}
	salt := make([]byte, 32)
	if _, err := io.ReadFull(random, salt); err != nil {
		return Credential{}, fmt.Errorf("drawing a SCRAM salt: %w", err)
	}
	salted, err := SaltedPassword(m, password, salt, iterations)
	if err != nil {
		return Credential{}, err
	}
	return CredentialFromSaltedPassword(m, salt, salted, iterations)
}

func hmacSum(h func() hash.Hash, key, msg []byte) []byte {
	mac := hmac.New(h, key)
	mac.Write(msg)
	return mac.Sum(nil)
}
