package kafka

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
)

// UUID is Kafka's 128-bit identifier (topic ids, incarnation ids). Its text
// form is the 16 bytes in URL-safe base64 without padding (22 characters), as
// Kafka prints it.
type UUID [16]byte

// MetadataTopicID is the fixed id Kafka reserves for __cluster_metadata (0...01).
func MetadataTopicID() UUID { return UUID{15: 1} }

// String renders the id in Kafka's base64url form.
func (u UUID) String() string { return base64.RawURLEncoding.EncodeToString(u[:]) }

// IsZero reports whether u is the zero id ("no id" in Kafka's protocol).
func (u UUID) IsZero() bool { return u == UUID{} }

// ParseUUID reads Kafka's base64url form; trailing '=' padding is tolerated.
func ParseUUID(s string) (UUID, error) {
	var u UUID
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return u, fmt.Errorf("kafka: uuid %q: %w", s, err)
	}
	if len(b) != len(u) {
		return u, fmt.Errorf("kafka: uuid %q: %d bytes, want 16", s, len(b))
	}
	copy(u[:], b)
	return u, nil
}

// RandomUUID draws a version-4 id. Like Kafka it skips the reserved ids and
// ids whose text starts with '-', which command lines would take for a flag.
func RandomUUID() (UUID, error) {
	for {
		var u UUID
		if _, err := rand.Read(u[:]); err != nil {
			return u, fmt.Errorf("kafka: random uuid: %w", err)
		}
		u[6] = u[6]&0x0f | 0x40
		u[8] = u[8]&0x3f | 0x80
		if !u.IsZero() && u != MetadataTopicID() && u.String()[0] != '-' {
			return u, nil
		}
	}
}
