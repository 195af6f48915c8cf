package kafka

import (
	"strings"
	"testing"
)

func TestUUIDTextForm(t *testing.T) {
	// Kafka prints the metadata topic id, Uuid(0, 1), as AAAAAAAAAAAAAAAAAAAAAQ.
	if got := MetadataTopicID().String(); got != "AAAAAAAAAAAAAAAAAAAAAQ" {
		t.Fatalf("MetadataTopicID() = %s", got)
	}
	for range 200 {
		u, err := RandomUUID()
		if err != nil {
			t.Fatal(err)
		}
		if u.IsZero() || u == MetadataTopicID() || strings.HasPrefix(u.String(), "-") {
			t.Fatalf("reserved id drawn: %s", u)
		}
		for _, text := range []string{u.String(), u.String() + "=="} {
			if back, err := ParseUUID(text); err != nil || back != u {
				t.Fatalf("ParseUUID(%s) = %s, %v", text, back, err)
			}
		}
	}
	for _, bad := range []string{"", "short", "AAAAAAAAAAAAAAAAAAAA+Q", "AAAAAAAAAAAAAAAAAAAAAAAAAA"} {
		if _, err := ParseUUID(bad); err == nil {
			t.Errorf("ParseUUID(%q) accepted", bad)
		}
	}
}
