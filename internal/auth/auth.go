// Package auth holds what the security pieces share: the principal of a
// connection (Kafka's KafkaPrincipal) and the names of the security
// protocols. TLS is in auth/tlsconf; SASL mechanisms and the authorizer go
// beside it. See docs/security.md.
package auth

import (
	"fmt"
	"strings"
)

// Kafka's security protocols, as listener.security.protocol.map names them.
const (
	Plaintext     = "PLAINTEXT"
	SSL           = "SSL"
	SASLPlaintext = "SASL_PLAINTEXT"
	SASLSSL       = "SASL_SSL"
)

// UserType is the principal type Kafka's default principal builder gives
// every authenticated (and the anonymous) connection.
const UserType = "User"

// Principal is who a connection is: Kafka's KafkaPrincipal, written
// "Type:Name" in ACLs, super.users and logs.
type Principal struct {
	Type string
	Name string
}

// Anonymous is the principal of a connection nothing authenticated
// (PLAINTEXT, or SSL without a client certificate), Kafka's
// KafkaPrincipal.ANONYMOUS. It is a value: never assign to it.
var Anonymous = Principal{Type: UserType, Name: "ANONYMOUS"}

// User is the principal of a user name, User:name.
func User(name string) Principal { return Principal{Type: UserType, Name: name} }

// String renders the principal as Kafka does: "User:alice".
func (p Principal) String() string { return p.Type + ":" + p.Name }

// IsZero reports whether the principal was never set.
func (p Principal) IsZero() bool { return p == Principal{} }

// ParsePrincipal reads "Type:Name" as Kafka's SecurityUtils.parseKafkaPrincipal
// does: split at the first colon; both parts must be present.
func ParsePrincipal(s string) (Principal, error) {
	typ, name, ok := strings.Cut(s, ":")
	if !ok || typ == "" || name == "" {
		return Principal{}, fmt.Errorf("principal %q is not Type:Name", s)
	}
	return Principal{Type: typ, Name: name}, nil
}
