package sasl

import (
	"testing"

	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/sluice-io/sluice/internal/auth"
	"github.com/sluice-io/sluice/internal/metadata"
)

// TestImageCredentials authenticates against a credential replayed into
// the metadata image as a UserScramCredentialRecord.
func TestImageCredentials(t *testing.T) {
	cred, err := NewCredential(ScramSHA512, "alice-secret", 4096, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := metadata.NewDelta(metadata.EmptyImage())
	if err := d.Replay(1, 1, &metadata.UserScramCredentialRecord{Name: "alice", Mechanism: metadata.ScramSHA512,
		Salt: cred.Salt, StoredKey: cred.StoredKey, ServerKey: cred.ServerKey, Iterations: 4096}); err != nil {
		t.Fatal(err)
	}
	im := d.Apply()
	store := ImageCredentials(func() *metadata.Image { return im })

	srv, err := NewScramServer(ScramSHA512, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := exchange(t, scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism(), srv, t0)
	if r.serverErr != nil || r.clientErr != nil || srv.Principal() != auth.User("alice") {
		t.Fatalf("%+v", r)
	}
	if _, ok := store.ScramCredential("alice", ScramSHA256); ok {
		t.Fatal("a SCRAM-SHA-256 credential alice never had")
	}
	if _, ok := store.ScramCredential("alice", Plain); ok {
		t.Fatal("a PLAIN credential")
	}
	if _, ok := ImageCredentials(func() *metadata.Image { return nil }).ScramCredential("alice", ScramSHA512); ok {
		t.Fatal("a credential from no image")
	}
}
