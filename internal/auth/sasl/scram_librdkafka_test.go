package sasl

import (
	"crypto/hmac"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/internal/auth"
)

// librdkafka's client-final message repeats its nonce in front of the
// server-first one (c=biws,r=<client nonce><server r>); Kafka checks only
// that the nonce ends with the server's, so kcat authenticates.
func TestScramLibrdkafkaNonce(t *testing.T) {
	store := scramStore(t)
	srv, err := NewScramServer(ScramSHA512, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	const cnonce = "r1|C2e[4ec5y-xUlBeTwh=;u3@~np}9I"
	bare := "n=alice,r=" + cnonce
	first, _, err := srv.Step([]byte("n,,"+bare), t0)
	if err != nil {
		t.Fatal(err)
	}
	attrs := map[string]string{}
	for _, f := range strings.Split(string(first), ",") {
		attrs[f[:1]] = f[2:]
	}
	salt, _ := base64.StdEncoding.DecodeString(attrs["s"])
	salted, err := SaltedPassword(ScramSHA512, "alice-secret", salt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	h := mustHash(t, ScramSHA512)
	clientKey := hmacSum(h, salted, []byte("Client Key"))
	stored := h()
	stored.Write(clientKey)
	withoutProof := "c=biws,r=" + cnonce + attrs["r"]
	authMsg := []byte(bare + "," + string(first) + "," + withoutProof)
	sig := hmacSum(h, stored.Sum(nil), authMsg)
	proof := make([]byte, len(sig))
	for i := range proof {
		proof[i] = clientKey[i] ^ sig[i]
	}
	final, done, err := srv.Step([]byte(withoutProof+",p="+base64.StdEncoding.EncodeToString(proof)), t0)
	if err != nil || !done {
		t.Fatalf("librdkafka's client-final: done %v err %v", done, err)
	}
	wantSig := hmacSum(h, hmacSum(h, salted, []byte("Server Key")), authMsg)
	if !hmac.Equal([]byte(final), []byte("v="+base64.StdEncoding.EncodeToString(wantSig))) || srv.Principal() != auth.User("alice") {
		t.Fatalf("server-final %q principal %v", final, srv.Principal())
	}
}
