package sasl

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"strings"
	"time"

	"github.com/sluice-io/sluice/internal/auth"
)

// PlainAuthenticator checks a PLAIN user's password, Kafka's
// PlainServerCallbackHandler.
type PlainAuthenticator interface {
	Authenticate(user string, password []byte) bool
}

// PlainUsers is the user_<name>="<password>" options of a PlainLoginModule
// entry. It compares passwords in constant time, also for unknown users.
type PlainUsers struct {
	// digests keeps only SHA-256 digests, so comparing leaks no length.
	digests map[string][sha256.Size]byte
}

// PlainUsersFromJAAS reads the users of the listener's PLAIN JAAS entry
// (the options named user_<name>), as Kafka's PlainServerCallbackHandler
// looks them up in entries of PlainLoginModule.
func PlainUsersFromJAAS(e JAASEntry) (*PlainUsers, error) {
	if e.LoginModule != PlainLoginModule {
		return nil, fmt.Errorf("PLAIN needs login module %s", PlainLoginModule)
	}
	u := &PlainUsers{digests: map[string][sha256.Size]byte{}}
	for k, v := range e.Options {
		if name, ok := strings.CutPrefix(k, "user_"); ok {
			u.digests[name] = sha256.Sum256([]byte(v))
		}
	}
	return u, nil
}

// Authenticate reports whether password is user's.
func (u *PlainUsers) Authenticate(user string, password []byte) bool {
	want, known := u.digests[user]
	got := sha256.Sum256(password)
	equal := subtle.ConstantTimeCompare(want[:], got[:]) == 1
	return known && equal
}

// plainServer is Kafka's PlainSaslServer: one message, RFC 4616's
// [authzid] NUL authcid NUL passwd.
type plainServer struct {
	users     PlainAuthenticator
	principal auth.Principal
	ended     bool
}

// NewPlainServer starts a PLAIN exchange checking passwords with users.
func NewPlainServer(users PlainAuthenticator) Server {
	return &plainServer{users: users}
}

func (s *plainServer) Mechanism() Mechanism { return Plain }

func (s *plainServer) Principal() auth.Principal { return s.principal }

func (s *plainServer) SessionLifetime() (time.Duration, bool) { return 0, false }

func (s *plainServer) Step(msg []byte, _ time.Time) ([]byte, bool, error) {
	if s.ended {
		return nil, false, refuse(Plain, "unexpected message after the exchange ended")
	}
	s.ended = true
	// Kafka splits at the first two NULs: a missing part is empty and
	// further NULs belong to the password.
	authzid, rest, _ := bytes.Cut(msg, []byte{0})
	user, password, _ := bytes.Cut(rest, []byte{0})
	if len(user) == 0 {
		return nil, false, refuse(Plain, "Authentication failed: username not specified")
	}
	if len(password) == 0 {
		return nil, false, refuse(Plain, "Authentication failed: password not specified")
	}
	name := toUTF8(user)
	if !s.users.Authenticate(name, password) {
		return nil, false, refuseWith(Plain, "Authentication failed: Invalid username or password")
	}
	if len(authzid) != 0 && toUTF8(authzid) != name {
		return nil, false, refuseWith(Plain, "Authentication failed: Client requested an authorization id that is different from username")
	}
	s.principal = auth.User(name)
	return []byte{}, true, nil
}

// toUTF8 decodes b much as Java's new String(b, UTF_8) does: invalid bytes
// become U+FFFD.
func toUTF8(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") }
