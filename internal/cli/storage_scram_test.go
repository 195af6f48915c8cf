package cli

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/internal/auth/sasl"
	"github.com/sluice-io/sluice/internal/metadata"
)

// Kafka's --add-scram syntax: a password (salt drawn, 4096 iterations), a
// salt and iterations, a salted password; refusals as ScramParser's, never
// showing the password.
func TestParseAddScram(t *testing.T) {
	r, err := ParseAddScram(`SCRAM-SHA-256=[name=alice,password="alice-secret"]`)
	if err != nil {
		t.Fatal(err)
	}
	if r.Name != "alice" || r.Mechanism != metadata.ScramSHA256 || r.Iterations != 4096 || len(r.Salt) != 32 {
		t.Fatalf("record %+v", r)
	}
	salt := []byte("0123456789abcdef")
	want, err := sasl.SaltedPassword(sasl.ScramSHA512, "bob-secret", salt, 8192)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString
	for _, arg := range []string{
		"SCRAM-SHA-512=[name=bob,salt=" + b64(salt) + ",iterations=8192,password=bob-secret]",
		"SCRAM-SHA-512=[name=bob,salt=" + b64(salt) + ",iterations=8192,saltedpassword=" + b64(want) + "]",
	} {
		r, err := ParseAddScram(arg)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := sasl.CredentialFromSaltedPassword(sasl.ScramSHA512, salt, want, 8192)
		if r.Name != "bob" || !bytes.Equal(r.StoredKey, c.StoredKey) || !bytes.Equal(r.ServerKey, c.ServerKey) || r.Iterations != 8192 {
			t.Errorf("%s: record %+v", arg, r)
		}
	}
	for arg, want := range map[string]string{
		"SCRAM-SHA-256":                                          "equals sign",
		"SCRAM-SHA-1=[name=a,password=hunter2]":                  "not supported",
		"SCRAM-SHA-256=name=a,password=hunter2]":                 "start with [",
		"SCRAM-SHA-256=[name=a,password=hunter2":                 "end with ]",
		"SCRAM-SHA-256=[password=hunter2]":                       "'name'",
		"SCRAM-SHA-256=[name=a]":                                 "'password' or 'saltedpassword'",
		"SCRAM-SHA-256=[name=a,saltedpassword=aGk=]":             "'salt'",
		"SCRAM-SHA-256=[name=a,password=hunter2,x=1]":            "unknown SCRAM configurations: x",
		"SCRAM-SHA-256=[name=a,password=hunter2,iterations=100]": "between 4096 and 16384",
	} {
		_, err := ParseAddScram(arg)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", arg, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: error shows the password: %v", arg, err)
		}
	}
}
